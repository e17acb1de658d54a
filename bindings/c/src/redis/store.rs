//! [`rk_redis_store`]: the connection every Redis limiter talks through
//! (`ratekeeper_redis::RedisStore`), to one server or to a Redis Cluster.

use core::ffi::c_char;
use std::path::PathBuf;
use std::time::Duration;

use ratekeeper_redis::{Pem, RedisOption, RedisStore, StoreOptions, TlsOptions};

use super::not_in_callback;
use crate::boundary::{free_box, guard, handle, Out};
use crate::failure::Failure;
use crate::status::rk_status;
use crate::text;

/// How a store connects, and how long a decision may take, for
/// `rk_redis_store_connect()`. Every field may be 0 for its default, so a
/// designated initializer sets only what it changes; any other value is
/// between 1 and 3600000000 (an hour):
///
/// ```c
/// rk_redis_store_options options = {.timeout_micros = 50000};   // 50 ms per decision
/// ```
///
/// `username`, `password` and `tls` are NULL for none: a zeroed struct
/// connects as the URL says. The strings are read during the call only.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rk_redis_store_options {
    /// The longest one decision may take, reconnection included; past it
    /// the call fails with `RK_TIMEOUT` (or the limiter's unavailability
    /// policy decides). At most an hour; 0: 100 ms.
    pub timeout_micros: i64,
    /// The longest one attempt to connect may take. At most an hour; 0:
    /// 250 ms.
    pub connect_timeout_micros: i64,
    /// After Redis failed to answer, decisions stop trying it for this long
    /// and fail at once with `RK_UNAVAILABLE` (so a dead server costs no
    /// timeouts); then the next one tries again. At most an hour; 0:
    /// 200 ms, so decisions are back on Redis well within a second of it
    /// answering.
    pub retry_interval_micros: i64,
    /// The ACL user to authenticate as (UTF-8); overrides the URL's. NULL:
    /// the URL's, or the `default` user.
    pub username: *const c_char,
    /// The password (UTF-8); overrides the URL's. NULL: the URL's, if any.
    pub password: *const c_char,
    /// TLS settings: TLS whatever the URL's scheme. NULL: TLS only for a
    /// `rediss://` URL, trusting the system's roots.
    pub tls: *const rk_redis_tls_options,
}

impl Default for rk_redis_store_options {
    fn default() -> Self {
        rk_redis_store_options {
            timeout_micros: 0,
            connect_timeout_micros: 0,
            retry_interval_micros: 0,
            username: core::ptr::null(),
            password: core::ptr::null(),
            tls: core::ptr::null(),
        }
    }
}

/// TLS settings of a store (`rk_redis_store_options.tls`). Every string is
/// NULL for unset, else a NUL-terminated UTF-8 string read during the call:
///
/// ```c
/// rk_redis_tls_options tls = {.ca_file = "/etc/redis/ca.crt"};
/// rk_redis_store_options options = {.tls = &tls};
/// ```
///
/// A handshake that fails on a certificate (not trusted, for another name,
/// expired; the client's refused) is `RK_REDIS_TLS_ERROR`, as are files
/// that cannot be read or hold no PEM.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct rk_redis_tls_options {
    /// A PEM file of the certificates to trust. NULL: the system's roots.
    pub ca_file: *const c_char,
    /// A PEM file of the client's certificate chain, for mutual TLS; given
    /// with `key_file`, or not at all.
    pub cert_file: *const c_char,
    /// A PEM file of the client certificate's private key.
    pub key_file: *const c_char,
    /// The name the server's certificate must carry, when it is not the
    /// URL's host (connecting by IP address, or through a tunnel). NULL:
    /// the URL's host. Not for a cluster: `rk_redis_store_connect_cluster`
    /// refuses it (`RK_UNSUPPORTED`).
    pub server_name: *const c_char,
    /// Encrypt but verify nothing: any certificate, for any name, expired
    /// or not, is accepted, so anyone on the path can read and change the
    /// traffic. For tests only.
    pub insecure_skip_verify: bool,
}

/// An optional string: NULL is `None`.
///
/// # Safety
/// `ptr` is NULL or a NUL-terminated string.
unsafe fn optional(ptr: *const c_char, argument: &'static str) -> Result<Option<String>, Failure> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: the caller's contract.
    unsafe { text::c_str(ptr, argument) }.map(|s| Some(s.to_owned()))
}

impl rk_redis_tls_options {
    /// # Safety
    /// Each string is NULL or a NUL-terminated string.
    unsafe fn to_options(self) -> Result<TlsOptions, Failure> {
        // SAFETY: the caller's contract, for each.
        let (ca, cert, key, server_name) = unsafe {
            (
                optional(self.ca_file, "tls->ca_file")?,
                optional(self.cert_file, "tls->cert_file")?,
                optional(self.key_file, "tls->key_file")?,
                optional(self.server_name, "tls->server_name")?,
            )
        };
        let file = |path: Option<String>| path.map(|p| Pem::File(PathBuf::from(p)));
        Ok(TlsOptions {
            ca: file(ca),
            client_cert: file(cert),
            client_key: file(key),
            server_name,
            insecure_skip_verify: self.insecure_skip_verify,
        })
    }
}

impl rk_redis_store_options {
    /// # Safety
    /// `username` and `password` are NULL or NUL-terminated strings; `tls`
    /// is NULL or valid for reading, its strings likewise.
    unsafe fn to_options(self) -> Result<StoreOptions, Failure> {
        let defaults = StoreOptions::default();
        // The crate checks each value, and names it (`failure::c_option_name`).
        let field = |option: RedisOption, micros: i64, default: Duration| match micros {
            0 => Ok(default),
            micros => option.from_micros(micros),
        };
        // SAFETY: the caller's contract: NULL or NUL-terminated strings.
        let (username, password) =
            unsafe { (optional(self.username, "username")?, optional(self.password, "password")?) };
        // SAFETY: the caller's contract: `tls` NULL or valid for reading,
        // its strings NULL or NUL-terminated.
        let tls = match unsafe { self.tls.as_ref() } {
            None => None,
            // SAFETY: as above.
            Some(tls) => Some(unsafe { tls.to_options() }?),
        };
        Ok(StoreOptions {
            timeout: field(RedisOption::Timeout, self.timeout_micros, defaults.timeout)?,
            connect_timeout: field(RedisOption::ConnectTimeout, self.connect_timeout_micros, defaults.connect_timeout)?,
            retry_interval: field(RedisOption::RetryInterval, self.retry_interval_micros, defaults.retry_interval)?,
            username,
            password,
            tls,
        })
    }
}

/// One multiplexed, reconnecting connection to Redis or a Redis Cluster,
/// shared by every limiter made from it and by every thread: requests from
/// all of them are pipelined on it. It is driven by the library's own
/// Redis thread (one for the process, started on first use).
///
/// Limiters hold a reference to their store: `rk_redis_store_free()` may be
/// called while they are in use, and the connection closes with the last
/// of them.
///
/// Thread safety: as `rk_limiter`; only `rk_redis_store_free()` must not
/// race with other calls on the handle.
#[derive(Debug)]
pub struct rk_redis_store {
    pub(crate) store: RedisStore,
}

/// A URL Redis could not parse is the caller's argument, not a failure to
/// connect.
fn connect_failure(argument: &'static str, error: ratekeeper_redis::Error) -> Failure {
    match error {
        ratekeeper_redis::Error::Redis(e) if e.kind() == redis::ErrorKind::InvalidClientConfig => {
            Failure::Malformed { argument, problem: e.to_string() }
        }
        other => other.into(),
    }
}

/// Connects to one Redis server at `url` (`"redis://host:port/db"`,
/// `"redis://:password@host/"`, `"unix:///path/to/socket"`), waiting at
/// most the connect timeout, and stores the store in `*out_store`. Free it
/// with `rk_redis_store_free()`.
///
/// `options`: NULL for the defaults (100 ms per decision).
///
/// Returns `RK_INVALID_ARGUMENT` when `url` is not a Redis URL or not
/// UTF-8, or an option is negative or beyond an hour; `RK_UNAVAILABLE`
/// when the server cannot be reached (refused, unreachable), `RK_TIMEOUT`
/// when it does not answer in time, `RK_REDIS_AUTH_ERROR` when it refuses
/// the credentials (a wrong password, an unknown user), `RK_REDIS_TLS_ERROR`
/// when TLS fails on a certificate (see `rk_redis_tls_options`),
/// `RK_REDIS_ERROR` when it refuses the connection otherwise;
/// `RK_NULL_POINTER` when `url` or `out_store` is NULL.
///
/// # Safety
/// `url` is NULL or a NUL-terminated string; `options` is NULL or valid
/// for reading, its strings NULL or NUL-terminated and its `tls` NULL or
/// valid for reading (its strings likewise); `out_store` is NULL or valid
/// for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_store_connect(
    url: *const c_char,
    options: *const rk_redis_store_options,
    out_store: *mut *mut rk_redis_store,
) -> rk_status {
    guard("rk_redis_store_connect", || {
        // SAFETY: the caller's contract.
        let (url, options, out) =
            unsafe { (text::c_str(url, "url")?, options.as_ref(), Out::required(out_store, "out_store")?) };
        // SAFETY: the caller's contract (the options' strings and TLS).
        let options = unsafe { options.copied().unwrap_or_default().to_options() }?;
        not_in_callback()?;
        let store = RedisStore::connect(url, options).map_err(|e| connect_failure("url", e))?;
        out.write(Box::into_raw(Box::new(rk_redis_store { store })));
        Ok(())
    })
}

/// Connects to a Redis Cluster through the `nodes_len` node URLs at
/// `nodes` (any of its masters will do; the others are discovered), and
/// stores the store in `*out_store`. Free it with `rk_redis_store_free()`.
///
/// Returns as `rk_redis_store_connect()`, with `RK_INVALID_ARGUMENT` for
/// an empty list too; `RK_NULL_POINTER` when `nodes` (with a `nodes_len`
/// above 0), one of its strings, or `out_store` is NULL.
///
/// # Safety
/// `nodes` is NULL or valid for reading `nodes_len` pointers, each NULL or
/// a NUL-terminated string; `options` is NULL or valid for reading;
/// `out_store` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_store_connect_cluster(
    nodes: *const *const c_char,
    nodes_len: usize,
    options: *const rk_redis_store_options,
    out_store: *mut *mut rk_redis_store,
) -> rk_status {
    guard("rk_redis_store_connect_cluster", || {
        // SAFETY: the caller's contract.
        let (list, options, out) = unsafe {
            (text::slice(nodes, nodes_len, "nodes")?, options.as_ref(), Out::required(out_store, "out_store")?)
        };
        let mut urls = Vec::with_capacity(list.len());
        for (index, &node) in list.iter().enumerate() {
            // SAFETY: the caller's contract.
            urls.push(unsafe { text::c_str(node, "nodes") }.map_err(|f| Failure::in_element("nodes", index, f))?);
        }
        if urls.is_empty() {
            return Err(Failure::Invalid {
                argument: "nodes_len",
                value: ratekeeper::Value::Int(0),
                requirement: "must be at least 1",
            });
        }
        // SAFETY: the caller's contract (the options' strings and TLS).
        let options = unsafe { options.copied().unwrap_or_default().to_options() }?;
        not_in_callback()?;
        let store = RedisStore::connect_cluster(&urls, options).map_err(|e| connect_failure("nodes", e))?;
        out.write(Box::into_raw(Box::new(rk_redis_store { store })));
        Ok(())
    })
}

/// Connects to the master that Redis Sentinel names `master_name`, asking
/// the `sentinels_len` sentinels at `sentinels` (`"redis://host:port"`; a
/// sentinel's own password in its URL, `"redis://:password@host:port"`),
/// and stores the store in `*out_store`. Free it with
/// `rk_redis_store_free()`.
///
/// The store follows a failover: when the master stops answering or
/// answers `READONLY`, the sentinels are asked again (at most once per
/// retry interval, no call waiting past its timeout) and the store
/// connects to the new master; meanwhile each limiter's unavailability
/// policy decides. `options` are the master connection's.
///
/// Returns as `rk_redis_store_connect()`, with `RK_INVALID_ARGUMENT` for
/// an empty list or an empty `master_name` too, and `RK_UNAVAILABLE` when
/// no sentinel names a master that answers as one; `RK_NULL_POINTER` when
/// `sentinels` (with a `sentinels_len` above 0), one of its strings,
/// `master_name` or `out_store` is NULL.
///
/// # Safety
/// `sentinels` is NULL or valid for reading `sentinels_len` pointers, each
/// NULL or a NUL-terminated string; `master_name` is NULL or a
/// NUL-terminated string; `options` is NULL or valid for reading;
/// `out_store` is NULL or valid for writing a pointer.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_store_connect_sentinel(
    sentinels: *const *const c_char,
    sentinels_len: usize,
    master_name: *const c_char,
    options: *const rk_redis_store_options,
    out_store: *mut *mut rk_redis_store,
) -> rk_status {
    guard("rk_redis_store_connect_sentinel", || {
        // SAFETY: the caller's contract.
        let (list, name, options, out) = unsafe {
            (
                text::slice(sentinels, sentinels_len, "sentinels")?,
                text::c_str(master_name, "master_name")?,
                options.as_ref(),
                Out::required(out_store, "out_store")?,
            )
        };
        let mut urls = Vec::with_capacity(list.len());
        for (index, &sentinel) in list.iter().enumerate() {
            // SAFETY: the caller's contract.
            urls.push(
                unsafe { text::c_str(sentinel, "sentinels") }
                    .map_err(|f| Failure::in_element("sentinels", index, f))?,
            );
        }
        if urls.is_empty() {
            return Err(Failure::Invalid {
                argument: "sentinels_len",
                value: ratekeeper::Value::Int(0),
                requirement: "must be at least 1",
            });
        }
        if name.is_empty() {
            return Err(Failure::Malformed { argument: "master_name", problem: "must not be empty".to_owned() });
        }
        // SAFETY: the caller's contract (the options' strings and TLS).
        let options = unsafe { options.copied().unwrap_or_default().to_options() }?;
        not_in_callback()?;
        let store = RedisStore::connect_sentinel(&urls, name, options).map_err(|e| connect_failure("sentinels", e))?;
        out.write(Box::into_raw(Box::new(rk_redis_store { store })));
        Ok(())
    })
}

/// Releases the caller's reference to a store; limiters made from it keep
/// it (and the connection) until they are freed. `NULL` does nothing.
///
/// # Safety
/// `store` is NULL or a store from `rk_redis_store_connect*()` that has not
/// been freed, and no other call is using it.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_store_free(store: *mut rk_redis_store) {
    // SAFETY: the caller's contract: NULL or a live box from rk_redis_store_connect* that
    // no other call is using.
    unsafe { free_box("rk_redis_store_free", store) }
}

/// Whether Redis failed to answer within the last retry interval (so that
/// decisions now fail at once, or the policies decide), in `*out_down`.
/// Takes no round trip.
///
/// Returns `RK_NULL_POINTER` when `store` or `out_down` is NULL.
///
/// # Safety
/// `store` is NULL or a live store; `out_down` is NULL or valid for a
/// write.
#[no_mangle]
pub unsafe extern "C" fn rk_redis_store_is_down(store: *const rk_redis_store, out_down: *mut bool) -> rk_status {
    guard("rk_redis_store_is_down", || {
        // SAFETY: the caller's contract.
        let (store, out) = unsafe { (handle(store, "store")?, Out::required(out_down, "out_down")?) };
        out.write(store.store.is_down());
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::boundary::tests::{last_argument, last_message};
    use core::ptr::{null, null_mut};

    #[test]
    fn bad_urls_and_options_are_invalid_arguments() {
        // SAFETY: every pointer passed is live or NULL, as documented.
        unsafe {
            let mut store = null_mut();
            assert_eq!(
                rk_redis_store_connect(c"http://nowhere/".as_ptr(), null(), &mut store),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("url"), "{}", last_message());
            let options = rk_redis_store_options { timeout_micros: -1, ..Default::default() };
            assert_eq!(
                rk_redis_store_connect(c"redis://127.0.0.1:1/".as_ptr(), &options, &mut store),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("timeout_micros"));
            // Beyond an hour, refused before connecting (nothing listens on
            // port 1: connecting would be RK_UNAVAILABLE).
            for options in [
                rk_redis_store_options { timeout_micros: 3_600_000_001, ..Default::default() },
                rk_redis_store_options { connect_timeout_micros: 3_600_000_001, ..Default::default() },
                rk_redis_store_options { retry_interval_micros: 3_600_000_001, ..Default::default() },
            ] {
                assert_eq!(
                    rk_redis_store_connect(c"redis://127.0.0.1:1/".as_ptr(), &options, &mut store),
                    rk_status::RK_INVALID_ARGUMENT,
                    "{}",
                    last_message()
                );
                let argument = last_argument().unwrap();
                assert!(argument.ends_with("_micros"), "{argument}");
                let message = last_message();
                let named = format!("rk_redis_store_connect: invalid argument {argument} = 3600000001: must be ");
                assert!(message.starts_with(&named), "{message}");
                assert!(
                    message.ends_with("an hour (1 to 3600000000 microseconds)") || argument == "retry_interval_micros"
                );
                assert!(message.ends_with(" to 3600000000 microseconds)"), "{message}");
            }
            let options = rk_redis_store_options { retry_interval_micros: 3_600_000_001, ..Default::default() };
            let nodes = [c"redis://127.0.0.1:1".as_ptr()];
            assert_eq!(
                rk_redis_store_connect_cluster(nodes.as_ptr(), 1, &options, &mut store),
                rk_status::RK_INVALID_ARGUMENT
            );
            assert_eq!(last_argument().as_deref(), Some("retry_interval_micros"));
            assert_eq!(rk_redis_store_connect(null(), null(), &mut store), rk_status::RK_NULL_POINTER);
            assert_eq!(last_argument().as_deref(), Some("url"));
            assert_eq!(rk_redis_store_connect_cluster(null(), 0, null(), &mut store), rk_status::RK_INVALID_ARGUMENT);
            assert_eq!(last_argument().as_deref(), Some("nodes_len"));
            let nodes = [c"redis://127.0.0.1:1".as_ptr(), null()];
            assert_eq!(
                rk_redis_store_connect_cluster(nodes.as_ptr(), 2, null(), &mut store),
                rk_status::RK_NULL_POINTER
            );
            assert_eq!(last_message(), "rk_redis_store_connect_cluster: nodes[1]: nodes is NULL");
            assert!(store.is_null());
        }
    }

    #[test]
    fn nothing_listening_is_unavailable() {
        // Port 1 on loopback: refused at once.
        let options = rk_redis_store_options { connect_timeout_micros: 2_000_000, ..Default::default() };
        let mut store = null_mut();
        // SAFETY: as above.
        let status = unsafe { rk_redis_store_connect(c"redis://127.0.0.1:1/".as_ptr(), &options, &mut store) };
        assert_eq!(status, rk_status::RK_UNAVAILABLE, "{}", last_message());
        assert_eq!(last_argument(), None);
        assert!(store.is_null());
    }
}
