//! `RedisStore`: one multiplexed, reconnecting connection to Redis or a
//! Redis Cluster (`ratekeeper_redis::RedisStore`). `redisConnect` checks
//! the URLs here and the options through the crate (`option_duration`),
//! connects on libuv's thread pool (the crate connects only blocking) and
//! resolves to the store's bound functions.

use std::sync::{Arc, Mutex, PoisonError, Weak};

use napi::bindgen_prelude::Unknown;
use napi::{sys, Env, JsValue};
use napi_derive::napi;
use ratekeeper_redis::{Pem, RedisOption, RedisStore, ScriptPipe, StoreOptions, TlsOptions};
use redis::IntoConnectionInfo;

use super::{option_duration, pipe, Close, Held};
use crate::bound::{Binder, Named, Returned, Tagged};
use crate::error::{guarded, Failure};
use crate::js::Js;
use crate::promise::{self, Answer, Done};

/// One JavaScript `RedisStore`.
pub(crate) struct Store {
    store: Held<RedisStore>,
    /// The limiters and memberships made from it (closed with it).
    children: Mutex<Vec<Weak<dyn Close>>>,
    /// Its own socket's exact-mode checks, when a plain TCP connection
    /// reaches the server (see `pipe`), until the store is closed and
    /// nothing waits on them.
    pub(super) pipe: Mutex<Option<ScriptPipe<Done>>>,
}

impl Tagged for Store {
    const TAG: sys::napi_type_tag = sys::napi_type_tag { lower: 0x9d52_2a94_78d5_1d1b, upper: 0xe395_df0b_0e61_33d1 };
}

impl Store {
    /// The crate's store, or `Closed`.
    pub(crate) fn get(&self) -> Result<RedisStore, Failure> {
        self.store.get()
    }

    pub(crate) fn adopt(&self, child: Weak<dyn Close>) {
        let mut children = self.children.lock().unwrap_or_else(PoisonError::into_inner);
        children.retain(|c| c.strong_count() > 0);
        children.push(child);
    }

    fn close(&self) {
        self.store.take();
        // The pipe's clone of the store goes once nothing waits on it.
        let mut pipe = self.pipe.lock().unwrap_or_else(PoisonError::into_inner);
        if pipe.as_ref().is_some_and(ScriptPipe::is_idle) {
            *pipe = None;
        }
        drop(pipe);
        let children = std::mem::take(&mut *self.children.lock().unwrap_or_else(PoisonError::into_inner));
        for child in children.iter().filter_map(Weak::upgrade) {
            child.close();
        }
    }
}

/// The store a limiter's constructor was given.
pub(crate) fn store_of(value: Js) -> Result<Arc<Store>, Failure> {
    crate::bound::target_of::<Store>(value).ok_or(Failure::WrongType {
        argument: "store",
        value,
        expected: "a RedisStore",
    })
}

/// The object `redisConnect` resolves to: functions bound to one store.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct RedisStoreMethods {
    /// Whether Redis failed to answer within the last retry interval.
    #[napi(ts_type = "() => boolean")]
    pub is_down: (),
    /// Closes the store and everything made from it.
    #[napi(ts_type = "() => void")]
    pub close: (),
    /// Whether it is closed.
    #[napi(ts_type = "() => boolean")]
    pub closed: (),
    /// Whether it is connected to a Redis Cluster.
    #[napi(ts_type = "boolean")]
    pub cluster: (),
    /// The master's name, for a store that Redis Sentinel points to.
    #[napi(ts_type = "string | undefined")]
    pub master_name: (),
    /// The decision timeout, in milliseconds.
    #[napi(ts_type = "number")]
    pub timeout_ms: (),
    /// The retry interval, in milliseconds.
    #[napi(ts_type = "number")]
    pub retry_interval_ms: (),
    /// The server's host, when the store's own socket can reach it (see
    /// `pipe`); the `pipe…` methods exist only then.
    #[napi(ts_type = "string | undefined")]
    pub pipe_host: (),
    /// The server's port, likewise.
    #[napi(ts_type = "number | undefined")]
    pub pipe_port: (),
    /// The longest the socket may take to connect, in milliseconds.
    #[napi(ts_type = "number | undefined")]
    pub pipe_connect_timeout_ms: (),
    /// Whether to open the socket now (if so, the pipe counts it as opening).
    #[napi(ts_type = "() => boolean")]
    pub pipe_connect: (),
    /// The socket connected (its set-up is the next output).
    #[napi(ts_type = "() => void")]
    pub pipe_opened: (),
    /// The bytes of the next write, if any (one script run's).
    #[napi(ts_type = "() => Uint8Array | undefined")]
    pub pipe_output: (),
    /// Bytes read: settles what they answer; -2 when the pipe closed or is
    /// gone (the socket must go).
    #[napi(ts_type = "(bytes: Uint8Array) => undefined | -2")]
    pub pipe_received: (),
    /// The timer fired: fails what timed out; the milliseconds until the
    /// next deadline, -1 when nothing waits, or -2 when the open pipe
    /// closed or is gone (the socket must go).
    #[napi(ts_type = "() => number")]
    pub pipe_expire: (),
    /// The socket closed, or failed to connect: fails what was waiting.
    #[napi(ts_type = "() => void")]
    pub pipe_lost: (),
    /// The store's TLS settings for the socket (`tls.connect`), when the
    /// server speaks TLS.
    #[napi(ts_type = "PipeTls | undefined")]
    pub pipe_tls: (),
    /// The TLS socket failed on a certificate (`reason`: its error's code
    /// and message): fails what was waiting with the TLS error, leaving the
    /// store up.
    #[napi(ts_type = "(reason: string) => void")]
    pub pipe_tls_failed: (),
}

const METHODS: &[Named<Store>] = &[
    (c"isDown", 0, |s, _| Ok(Returned::Bool(s.get()?.is_down()))),
    (c"close", 0, |s, _| {
        s.close();
        Ok(Returned::Undefined)
    }),
    (c"closed", 0, |s, _| Ok(Returned::Bool(s.get().is_err()))),
];

/// What a store's URL must be.
const URL_REQUIREMENT: &str = "must be a Redis URL such as \"redis://127.0.0.1:6379/0\"";

/// A URL, checked by the Redis client's own parser.
fn url(value: Js, argument: &'static str) -> Result<String, Failure> {
    let Some(url) = value.string() else {
        return Err(Failure::WrongType { argument, value, expected: "a string" });
    };
    match url.as_str().into_connection_info() {
        Ok(_) => Ok(url),
        Err(_) => Err(Failure::OutOfRange { argument, value, requirement: URL_REQUIREMENT }),
    }
}

/// `masterName`: absent, or the non-empty name of a master Sentinel knows.
fn sentinel_master_name(value: Js) -> Result<Option<String>, Failure> {
    if value.is_undefined() {
        return Ok(None);
    }
    match value.string() {
        None => Err(Failure::WrongType { argument: "masterName", value, expected: "a string" }),
        Some(name) if name.is_empty() => {
            Err(Failure::OutOfRange { argument: "masterName", value, requirement: "must not be empty" })
        }
        Some(name) => Ok(Some(name)),
    }
}

/// What a PEM option must be.
const PEM_EXPECTED: &str = "a PEM string or Buffer";

/// The bytes of a `Uint8Array` (a `Buffer` is one), copied.
fn uint8_bytes(value: Js) -> Option<Vec<u8>> {
    let mut is_typed = false;
    // SAFETY: a live value of the running call.
    if unsafe { sys::napi_is_typedarray(value.env, value.raw, &mut is_typed) } != sys::Status::napi_ok || !is_typed {
        return None;
    }
    let (mut kind, mut length, mut data) = (0, 0usize, std::ptr::null_mut());
    let (mut buffer, mut offset) = (std::ptr::null_mut(), 0usize);
    // SAFETY: a live typed array of the running call.
    let status = unsafe {
        sys::napi_get_typedarray_info(value.env, value.raw, &mut kind, &mut length, &mut data, &mut buffer, &mut offset)
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
        return None;
    }
    if length == 0 {
        return Some(Vec::new());
    }
    // SAFETY: the array's own `length` bytes, alive for this call.
    Some(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) }.to_vec())
}

/// A PEM option of `tls` (`ca`, `cert`, `key`) as Node's `tls.connect`
/// takes it: a string or a Buffer — and, for `ca` (`many`), an array of
/// them, whose certificates are all trusted (PEM texts joined are one).
fn pem(value: Js, argument: &'static str, many: bool) -> Result<Option<Pem>, Failure> {
    if value.is_undefined() {
        return Ok(None);
    }
    let one = |item: Js| {
        item.string_bytes().or_else(|| uint8_bytes(item)).ok_or(Failure::WrongType {
            argument,
            value: item,
            expected: if many { "a PEM string or Buffer, or an array of them" } else { PEM_EXPECTED },
        })
    };
    let bytes = match value.elements()? {
        Some(items) if many => {
            let mut joined = Vec::new();
            for item in items {
                joined.extend(one(item)?);
                joined.push(b'\n');
            }
            joined
        }
        _ => one(value)?,
    };
    if bytes.iter().all(u8::is_ascii_whitespace) {
        return Err(Failure::OutOfRange { argument, value, requirement: "must hold PEM text, not be empty" });
    }
    Ok(Some(Pem::Bytes(bytes)))
}

/// An optional string option (`undefined`: absent); `empty` says whether
/// `""` is a value.
fn text(value: Js, argument: &'static str, empty: bool) -> Result<Option<String>, Failure> {
    if value.is_undefined() {
        return Ok(None);
    }
    let text = value.string().ok_or(Failure::WrongType { argument, value, expected: "a string" })?;
    if text.is_empty() && !empty {
        return Err(Failure::OutOfRange { argument, value, requirement: "must not be empty" });
    }
    Ok(Some(text))
}

/// `options` with the ACL credentials and TLS settings of a store's
/// options: `username`, `password`, and `tls` (an object with Node's
/// `tls.connect` names, whose unknown keys `node/lib/redis.js` refused) —
/// TLS whatever the URL's scheme when `tls` is given, else only for
/// `rediss://`.
pub(super) fn with_access(options: StoreOptions, username: Js, password: Js, tls: Js) -> Result<StoreOptions, Failure> {
    let username = text(username, "username", false)?;
    // An ACL user's password may be anything, `""` included (`nopass`).
    let password = text(password, "password", true)?;
    if tls.is_undefined() {
        return Ok(StoreOptions { username, password, tls: None, ..options });
    }
    let ca = pem(tls.property("ca")?, "tls.ca", true)?;
    let (cert_value, key_value) = (tls.property("cert")?, tls.property("key")?);
    let client_cert = pem(cert_value, "tls.cert", false)?;
    let client_key = pem(key_value, "tls.key", false)?;
    match (&client_cert, &client_key) {
        (Some(_), None) => {
            return Err(Failure::OutOfRange {
                argument: "tls.key",
                value: key_value,
                requirement: "must come with tls.cert",
            })
        }
        (None, Some(_)) => {
            return Err(Failure::OutOfRange {
                argument: "tls.cert",
                value: cert_value,
                requirement: "must come with tls.key",
            })
        }
        _ => {}
    }
    let server_name = text(tls.property("servername")?, "tls.servername", false)?;
    let reject = tls.property("rejectUnauthorized")?;
    let insecure_skip_verify = match reject.is_undefined() {
        true => false,
        false => !reject.boolean().ok_or(Failure::WrongType {
            argument: "tls.rejectUnauthorized",
            value: reject,
            expected: "a boolean",
        })?,
    };
    let tls = TlsOptions { ca, client_cert, client_key, server_name, insecure_skip_verify };
    Ok(StoreOptions { username, password, tls: Some(tls), ..options })
}

/// Connects to Redis — one server at `urls` (a string), or a Redis Cluster
/// through any of `urls` (an array) when `cluster` — and resolves to the
/// store's bound functions. Options arrive one by one (`undefined` when
/// absent). With `masterName`, `urls` (an array) are sentinels to ask for
/// that master (`RedisStore::connect_sentinel`).
#[napi(
    ts_args_type = "urls: unknown, cluster: boolean, timeoutMs: unknown, timeoutMicros: unknown, connectTimeoutMs: unknown, connectTimeoutMicros: unknown, retryIntervalMs: unknown, retryIntervalMicros: unknown, username: unknown, password: unknown, tls: unknown, masterName: unknown",
    ts_return_type = "Promise<RedisStoreMethods>"
)]
#[allow(clippy::too_many_arguments)]
pub fn redis_connect<'env>(
    env: &'env Env,
    urls: Unknown<'_>,
    cluster: bool,
    timeout_ms: Unknown<'_>,
    timeout_micros: Unknown<'_>,
    connect_timeout_ms: Unknown<'_>,
    connect_timeout_micros: Unknown<'_>,
    retry_interval_ms: Unknown<'_>,
    retry_interval_micros: Unknown<'_>,
    username: Unknown<'_>,
    password: Unknown<'_>,
    tls: Unknown<'_>,
    master_name: Unknown<'_>,
) -> napi::Result<Unknown<'env>> {
    let js = |value: Unknown<'_>| Js::new(env.raw(), value.raw());
    guarded(env, || {
        let master_name = sentinel_master_name(js(master_name))?;
        let list = if master_name.is_some() { "sentinels" } else { "urls" };
        let cluster = cluster && master_name.is_none();
        let urls = if cluster || master_name.is_some() {
            let value = js(urls);
            let items = value.elements()?.filter(|items| !items.is_empty()).ok_or(Failure::WrongType {
                argument: list,
                value,
                expected: "a non-empty array of Redis URLs",
            })?;
            items.into_iter().map(|item| url(item, list)).collect::<Result<Vec<_>, _>>()?
        } else {
            vec![url(js(urls), "url")?]
        };
        let defaults = StoreOptions::default();
        let options = StoreOptions {
            timeout: option_duration(RedisOption::Timeout, js(timeout_ms), js(timeout_micros))?
                .unwrap_or(defaults.timeout),
            connect_timeout: option_duration(
                RedisOption::ConnectTimeout,
                js(connect_timeout_ms),
                js(connect_timeout_micros),
            )?
            .unwrap_or(defaults.connect_timeout),
            retry_interval: option_duration(
                RedisOption::RetryInterval,
                js(retry_interval_ms),
                js(retry_interval_micros),
            )?
            .unwrap_or(defaults.retry_interval),
            ..StoreOptions::default()
        };
        let options = with_access(options, js(username), js(password), js(tls))?;
        let shown_name = master_name.clone();
        let promise = promise::blocking(env.raw(), move || -> Answer {
            let connected = if let Some(master_name) = &master_name {
                let sentinels: Vec<&str> = urls.iter().map(String::as_str).collect();
                RedisStore::connect_sentinel(&sentinels, master_name, options)
            } else if cluster {
                let nodes: Vec<&str> = urls.iter().map(String::as_str).collect();
                RedisStore::connect_cluster(&nodes, options)
            } else {
                RedisStore::connect(&urls[0], options)
            };
            Box::new(move |cx| {
                let store = connected?;
                let (timeout, retry) = (store.timeout(), store.retry_interval());
                let pipe = ScriptPipe::new(&store);
                let address = pipe.as_ref().map(|p| {
                    let (host, port) = p.address();
                    (host.to_owned(), port, p.connect_timeout())
                });
                let tls = pipe.as_ref().map(|p| pipe::tls_settings(cx.env, p)).transpose()?.flatten();
                let target = Arc::new(Store {
                    store: Held::new(store, "this RedisStore"),
                    children: Mutex::new(Vec::new()),
                    pipe: Mutex::new(pipe),
                });
                let binder = &mut Binder::new(cx.env, target)?;
                binder
                    .methods(METHODS)?
                    .tagged()?
                    .flag(c"cluster", cluster)?
                    .number(c"timeoutMs", timeout.as_micros() as f64 / 1e3)?
                    .number(c"retryIntervalMs", retry.as_micros() as f64 / 1e3)?;
                if let Some(name) = &shown_name {
                    binder.value(c"masterName", crate::js::string(cx.env, name)?)?;
                }
                if let Some((host, port, connect_timeout)) = address {
                    binder
                        .methods(pipe::METHODS)?
                        .value(c"pipeHost", crate::js::string(cx.env, &host)?)?
                        .number(c"pipePort", f64::from(port))?
                        .number(c"pipeConnectTimeoutMs", connect_timeout.as_micros() as f64 / 1e3)?;
                    if let Some(tls) = tls {
                        binder.value(c"pipeTls", tls)?;
                    }
                }
                Ok(binder.finish())
            })
        })?;
        // SAFETY: a value just created in this call's environment.
        Ok(unsafe { Unknown::from_raw_unchecked(env.raw(), promise) })
    })
}
