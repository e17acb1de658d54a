//! A store's own socket on the JavaScript thread, for exact-mode checks:
//! the crate's [`ScriptPipe`] (sans I/O) driven by a `net.Socket` of
//! `node/lib/redis.js` (its `Pipe`).
//!
//! Why: through the crate's runtime thread, every batch of checks costs two
//! thread hand-offs (the checks go there, the answers come back through
//! the thread-safe function), and the JavaScript thread and Redis then take
//! turns idling. On this thread, answers settle their Promises as the
//! socket's bytes arrive, and the next turn's checks go out on the same
//! turn of the event loop (figures: `benches/earlier/redis-node.md`, in
//! BENCHMARKS.md's "Redis from Node.js").
//!
//! What stays on the crate's connection: a Redis Cluster and Unix sockets
//! (no pipe), peeks and the other modes, and every check while the pipe is
//! not open — before its socket connects, and after it failed, until the
//! store's retry interval has passed.
//!
//! Over TLS, `Pipe` opens a `tls.connect` socket with the store's TLS
//! settings (`pipeTls`: [`tls_settings`]) instead of a `net` one, and
//! reports a certificate refused with `pipeTlsFailed(reason)` rather than
//! `pipeLost`: the checks waiting fail with `ERR_RATEKEEPER_REDIS_TLS`, and
//! the store is not marked down (the server is up).
//!
//! The methods below are bound to the store's object; `Pipe` calls them:
//! `pipeConnect` (whether to open a socket now), `pipeOpened`,
//! `pipeReceived(bytes)`, `pipeExpire()` (its timer), `pipeLost()` (the
//! socket closed, or failed to connect within `pipeConnectTimeoutMs`), and
//! `pipeOutput()` after each of them and after a flush, for the next
//! write, until there is none. Each answer they bring settles its Promise
//! before the call returns (`settle_now`).
//!
//! Once the store is closed, the pipe goes as soon as no check waits on it
//! (the checks already sent complete), and its clone of the store — the
//! connection — with it.

use std::ffi::c_void;
use std::ptr;
use std::sync::{MutexGuard, PoisonError};
use std::time::Instant;

use napi::bindgen_prelude::Buffer;
use napi::sys;
use napi_derive::napi;
use ratekeeper_redis::{RedisLimiter, Requests, ScriptPipe};

use super::Store;
use crate::bound::{Args, Named, Returned};
use crate::error::{Boxed, Failure};
use crate::js;
use crate::promise::{settle_now, Done};

/// The store's pipe, if it has one still.
fn pipe(store: &Store) -> MutexGuard<'_, Option<ScriptPipe<Done>>> {
    store.pipe.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Drops the pipe of a closed store once nothing waits on it; whether the
/// pipe is still open (if not, its socket must go).
fn still_open(store: &Store, pipe: &mut Option<ScriptPipe<Done>>) -> bool {
    if pipe.as_ref().is_some_and(ScriptPipe::is_idle) && store.get().is_err() {
        *pipe = None;
    }
    pipe.as_ref().is_some_and(ScriptPipe::is_open)
}

/// Checks for `limiter` on its store's pipe; given back when the pipe
/// cannot take them (see the module docs).
pub(super) fn check_many(
    store: &Store,
    limiter: &RedisLimiter,
    requests: Requests<Done>,
) -> Result<(), Requests<Done>> {
    let mut pipe = pipe(store);
    let Some(open) = pipe.as_mut() else { return Err(requests) };
    let answered = open.check_many(limiter, requests)?;
    drop(pipe);
    settle_now(answered);
    Ok(())
}

/// A Buffer of `bytes` (`undefined` when there are none).
fn buffer(env: sys::napi_env, bytes: &[u8]) -> Result<Returned, Boxed> {
    if bytes.is_empty() {
        return Ok(Returned::Undefined);
    }
    let (mut data, mut out) = (ptr::null_mut(), ptr::null_mut());
    // SAFETY: copies `bytes` into a new Buffer of this environment.
    let status = unsafe { sys::napi_create_buffer_copy(env, bytes.len(), bytes.as_ptr().cast(), &mut data, &mut out) };
    js::check(env, status, "create a Buffer")?;
    Ok(Returned::Value(out))
}

/// The bytes of the Buffer `args` holds first.
fn bytes_of(args: &Args) -> Result<&[u8], Failure> {
    let value = args.get(0);
    let (mut data, mut length): (*mut c_void, usize) = (ptr::null_mut(), 0);
    // SAFETY: fails (a status, no crash) for anything but a Buffer.
    let status = unsafe { sys::napi_get_buffer_info(args.env, value.raw, &mut data, &mut length) };
    if status != sys::Status::napi_ok {
        return Err(Failure::WrongType { argument: "bytes", value, expected: "a Buffer" });
    }
    if length == 0 {
        return Ok(&[]);
    }
    // SAFETY: the Buffer's own memory, alive for this call (its argument).
    Ok(unsafe { std::slice::from_raw_parts(data.cast::<u8>(), length) })
}

/// The object `tls.connect`'s options are made of (`tlsOptions` in
/// `node/lib/redis.js`): the store's TLS settings, their files read.
#[allow(dead_code)]
#[napi(object, object_to_js = false, object_from_js = false)]
pub struct PipeTls {
    /// The certificates to trust; absent: the system's roots.
    #[napi(ts_type = "Uint8Array")]
    pub ca: Option<Buffer>,
    /// The client's certificate chain, for mutual TLS.
    #[napi(ts_type = "Uint8Array")]
    pub cert: Option<Buffer>,
    /// Its private key.
    #[napi(ts_type = "Uint8Array")]
    pub key: Option<Buffer>,
    /// The name the server's certificate must carry.
    pub server_name: String,
    /// Whether to verify the server's certificate at all.
    pub reject_unauthorized: bool,
}

/// `pipe`'s TLS settings as a [`PipeTls`] object, or `None` when it speaks
/// plain TCP.
pub(super) fn tls_settings(env: sys::napi_env, pipe: &ScriptPipe<Done>) -> Result<Option<sys::napi_value>, Failure> {
    let Some(tls) = pipe.tls() else { return Ok(None) };
    let mut object = ptr::null_mut();
    // SAFETY: plain value creation.
    js::check(env, unsafe { sys::napi_create_object(env, &mut object) }, "create object")?;
    for (key, pem) in [(c"ca", &tls.ca), (c"cert", &tls.client_cert), (c"key", &tls.client_key)] {
        if let Some(pem) = pem {
            if let Returned::Value(bytes) = buffer(env, pem).map_err(|e| *e.0)? {
                js::set(env, object, key, bytes)?;
            }
        }
    }
    js::set(env, object, c"serverName", js::string(env, &tls.server_name)?)?;
    let mut verify = ptr::null_mut();
    // SAFETY: plain value creation.
    js::check(env, unsafe { sys::napi_get_boolean(env, tls.verify, &mut verify) }, "create boolean")?;
    js::set(env, object, c"rejectUnauthorized", verify)?;
    Ok(Some(object))
}

/// What `pipeReceived` and `pipeExpire` answer when the pipe was open
/// and has closed (or is gone), so its socket must go — never while the
/// socket is still connecting, which `pipeLost` ends.
const CLOSED: f64 = -2.0;

pub(super) const METHODS: &[Named<Store>] = &[
    (c"pipeConnect", 0, |s, _| {
        // Not for a closed store; otherwise as the pipe says.
        let open = s.get().is_ok();
        Ok(Returned::Bool(match pipe(s).as_mut() {
            Some(pipe) if open && pipe.wants_connection() => {
                pipe.connecting();
                true
            }
            _ => false,
        }))
    }),
    (c"pipeOpened", 0, |s, _| {
        if let Some(pipe) = pipe(s).as_mut() {
            pipe.opened();
        }
        Ok(Returned::Undefined)
    }),
    (c"pipeOutput", 0, |s, args| match pipe(s).as_mut() {
        Some(pipe) => buffer(args.env, &pipe.take_output()),
        None => Ok(Returned::Undefined),
    }),
    (c"pipeReceived", 1, |s, args| {
        let bytes = bytes_of(args)?;
        let mut pipe = pipe(s);
        let answered = pipe.as_mut().map(|p| p.receive(bytes)).unwrap_or_default();
        let open = still_open(s, &mut pipe);
        drop(pipe);
        settle_now(answered);
        Ok(if open { Returned::Undefined } else { Returned::Number(CLOSED) })
    }),
    (c"pipeExpire", 0, |s, _| {
        let mut pipe = pipe(s);
        let now = Instant::now();
        let Some(p) = pipe.as_mut() else { return Ok(Returned::Number(CLOSED)) };
        let was_open = p.is_open();
        let answered = p.expire(now);
        let deadline = p.deadline();
        let open = still_open(s, &mut pipe);
        drop(pipe);
        settle_now(answered);
        Ok(Returned::Number(match deadline {
            _ if was_open && !open => CLOSED,
            // The milliseconds until the oldest check times out (at least 1).
            Some(deadline) if open => {
                (deadline.saturating_duration_since(now).as_micros() as f64 / 1e3).ceil().max(1.0)
            }
            _ => -1.0,
        }))
    }),
    (c"pipeTlsFailed", 1, |s, args| {
        let reason = args.get(0).string().unwrap_or_default();
        let mut pipe = pipe(s);
        let answered = pipe.as_mut().map(|p| p.tls_failed(&reason)).unwrap_or_default();
        still_open(s, &mut pipe);
        drop(pipe);
        settle_now(answered);
        Ok(Returned::Undefined)
    }),
    (c"pipeLost", 0, |s, _| {
        let mut pipe = pipe(s);
        let answered = pipe.as_mut().map(ScriptPipe::lost).unwrap_or_default();
        still_open(s, &mut pipe);
        drop(pipe);
        settle_now(answered);
        Ok(Returned::Undefined)
    }),
];
