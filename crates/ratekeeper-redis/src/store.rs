//! [`RedisStore`]: the connection every shared limiter talks through.
//!
//! One store is one multiplexed connection — to a single server or to a
//! Redis Cluster — that many limiters and threads share: requests from all
//! of them are pipelined on it, so dozens can be in flight at once. It
//! reconnects by itself (redis-rs's `ConnectionManager`, or the cluster
//! client's own handling of MOVED and failed nodes) and bounds every
//! decision by one timeout, so that no call ever hangs past it.
//!
//! The connection is driven by a small Tokio runtime owned by this crate (one
//! worker thread, started on first use). Every request is a task on it, and
//! callers wait for the task's answer: synchronously
//! ([`RedisStore::block_on`]), as a future that any executor can poll, or
//! through a callback (what the language bindings use). So the same store
//! serves blocking threads, async Rust, Python's asyncio and Node's event
//! loop, and a caller's own runtime (if any) is never blocked or required.
//!
//! ## Blocking calls on a single server
//!
//! A blocking call handed to the runtime's thread costs two wake-ups of
//! another thread per decision (the worker's, then the caller's), which is
//! most of a sequential caller's time beyond the round trip itself. So a
//! blocking call made outside any Tokio runtime runs its future on the
//! calling thread instead, and its scripts go out on a plain blocking
//! connection of the store's own (a small pool, one per thread calling at
//! once), read on that thread with the same timeout: no other thread is
//! involved. The answers, errors, timeouts and the `retry_interval` are the
//! same as on the multiplexed connection, which serves everything else
//! (async calls, callbacks, heartbeats, and every call to a cluster).
//! A Sentinel store, and a store whose TLS `server_name` is not the URL's
//! host, have no blocking connections: every call of theirs goes through a
//! reconnecting multiplexed connection of the store's own (see
//! `reconnect.rs` for why).
//!
//! The timeout bounds such a call whole — a new connection, its set-up,
//! the script, and loading the script after `NOSCRIPT` — because every
//! read and write on that connection waits only for what is left of the
//! call's deadline. A blocking socket's timeout is per read, not per call:
//! redis-rs's own connection set-up sends two commands (`CLIENT SETINFO`
//! for the library's name and version) and gave each read the whole
//! timeout, so with the server frozen every call that had to reconnect
//! took twice the timeout (207 ms for 100). So a blocking connection sends
//! no `CLIENT SETINFO`, and selects its database itself, leaving redis-rs
//! at most one set-up command (`AUTH`, or `HELLO` for RESP3), read within
//! what the connection attempt has left.
//!
//! ## When Redis counts as down
//!
//! After Redis failed to answer, the store stops sending it anything for
//! `retry_interval` (decisions fail at once with [`Error::Unavailable`],
//! and their policy decides). What counts as Redis failing to answer:
//!
//! * an I/O error, a refused or dropped connection, or an answer that says
//!   the server cannot decide now (`LOADING`, `MASTERDOWN`, `OOM`, …);
//! * a timeout *of the server's*, not of one call. A call that gets no
//!   answer within its timeout fails alone (with [`Error::Timeout`]) if
//!   the server answered anything — any call, on any of the store's
//!   connections — after that call was sent: the server is answering, and
//!   this one call was slow (a large request, a connection of its own that
//!   stalled). If nothing came back since, a single server is *probed*: a
//!   `PING` on a new connection of the probe's own, within the timeout. The
//!   store is marked down only if that too goes unanswered. (One probe at a
//!   time; calls meanwhile go on, each bounded by its own timeout.) A
//!   cluster's connections are the cluster client's own, so a cluster's
//!   store is marked down when nothing came back since the call was sent.
//!
//! A cluster's slot being moved to another master is not Redis failing:
//! the `ASK` and `TRYAGAIN` a script meets meanwhile are followed until it
//! runs, within the call's timeout (see `StoreInner::invoke_migrating`).
//!
//! Before, any timeout marked the store down: one caller's 10 MB key, slow
//! to send and to run, made every limiter on the store fall back to its
//! policy for the retry interval (a fail-open one let everyone in). A
//! frozen server is still found out within about two timeouts, and any
//! answer marks the store up again at once.

use std::cell::Cell;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU32, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Script, Value};
use tokio::runtime::Runtime;

use crate::error::Error;
use crate::options::RedisOption;
use crate::pipe::PipeTls;
use crate::reconnect::{Reconnecting, Server, Target};
use crate::sentinel::Sentinels;
use crate::tls::{Redacted, TlsOptions};

/// How a store connects, and how long a decision may take. Each field's
/// domain is its [`RedisOption`]'s: [`RedisStore::connect`] refuses a
/// value outside it ([`Error::InvalidOption`]) before connecting.
///
/// Build it with `..StoreOptions::default()` for the fields left as they
/// are: fields may be added. Its `Debug` shows no password.
#[derive(Clone)]
pub struct StoreOptions {
    /// The longest any one decision may take, reconnection included. Past
    /// it the call fails with [`Error::Timeout`] and the limiter's
    /// unavailability policy decides. Above 0, at most an hour. Default:
    /// 100 ms.
    pub timeout: Duration,
    /// The longest one attempt to connect may take. Above 0, at most an
    /// hour. Default: 250 ms.
    pub connect_timeout: Duration,
    /// After Redis failed to answer (an I/O error, a refused connection, a
    /// cluster that is down, a timeout with nothing answered since — see
    /// the module docs: one slow call is not enough), decisions stop trying
    /// it for this long and fail at once with [`Error::Unavailable`] — so
    /// that a dead server costs each decision nothing, not a timeout — then
    /// the next decision tries again. 0 to an hour. Default: 200 ms, so
    /// decisions are back on Redis well within a second of it answering
    /// again.
    pub retry_interval: Duration,
    /// TLS. `None`: TLS only for a `rediss://` URL, with the system's roots
    /// and the URL's host as the name the certificate must carry. `Some`:
    /// TLS whatever the URL's scheme, with these settings. Default: `None`.
    pub tls: Option<TlsOptions>,
    /// The ACL user to authenticate as; overrides the URL's
    /// (`redis://user:password@host`) when set. Default: `None`.
    pub username: Option<String>,
    /// The password (of [`username`](Self::username), or of the `default`
    /// user without one); overrides the URL's when set. Default: `None`.
    pub password: Option<String>,
}

impl std::fmt::Debug for StoreOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreOptions")
            .field("timeout", &self.timeout)
            .field("connect_timeout", &self.connect_timeout)
            .field("retry_interval", &self.retry_interval)
            .field("tls", &self.tls)
            .field("username", &self.username)
            .field("password", &self.password.as_ref().map(|_| Redacted))
            .finish()
    }
}

impl StoreOptions {
    /// The options if every field is within its domain, else the error
    /// naming the first that is not.
    pub fn checked(self) -> Result<Self, Error> {
        RedisOption::Timeout.check(self.timeout)?;
        RedisOption::ConnectTimeout.check(self.connect_timeout)?;
        RedisOption::RetryInterval.check(self.retry_interval)?;
        Ok(self)
    }
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            timeout: Duration::from_millis(100),
            connect_timeout: Duration::from_millis(250),
            retry_interval: Duration::from_millis(200),
            tls: None,
            username: None,
            password: None,
        }
    }
}

/// A shared, reconnecting, multiplexed connection to Redis or Redis
/// Cluster. Cheap to clone; clones share the connection.
#[derive(Clone)]
pub struct RedisStore {
    inner: Arc<StoreInner>,
}

struct StoreInner {
    connection: Connection,
    options: StoreOptions,
    /// Microseconds since `epoch` until which Redis counts as down (0: up).
    down_until: AtomicU64,
    /// Microseconds since `epoch` when the server last answered anything.
    last_answer: AtomicU64,
    /// Whether a probe runs (see "When Redis counts as down").
    probing: AtomicBool,
    /// Whether a timeout may probe the server: not an
    /// [`unconnected`](RedisStore::unconnected) store's.
    #[cfg(any(test, feature = "fuzzing"))]
    probes: bool,
    epoch: Instant,
    /// The blocking connections of a single server's store (see the module
    /// docs); `None` for a cluster.
    direct: Option<DirectConnections>,
}

/// Plain blocking connections to one server, for blocking calls made on
/// their caller's thread: idle ones wait here between calls.
struct DirectConnections {
    /// The store's client, as its URL gives it.
    client: redis::Client,
    /// The same server with the set-up that [`StoreInner::connect_direct`]
    /// does not leave to redis-rs taken out (see the module docs); made by
    /// [`DirectConnections::new`].
    bare: redis::Client,
    /// The database to select (0: none).
    db: i64,
    /// Idle connections and the process that opened them (a forked child
    /// must not talk on its parent's sockets).
    idle: Mutex<Vec<(u32, redis::Connection)>>,
}

/// At most this many idle blocking connections are kept per store.
const MAX_IDLE_DIRECT: usize = 16;

thread_local! {
    /// Set while [`RedisStore::block_on`] runs a future on this thread: its
    /// scripts may use a blocking connection, and [`RedisStore::spawn`]
    /// runs its future in place.
    static ON_CALLING_THREAD: Cell<bool> = const { Cell::new(false) };
}

fn on_calling_thread() -> bool {
    ON_CALLING_THREAD.with(Cell::get)
}

impl StoreInner {
    fn new(connection: Connection, options: StoreOptions, direct: Option<DirectConnections>) -> Self {
        StoreInner {
            connection,
            options,
            down_until: AtomicU64::new(0),
            last_answer: AtomicU64::new(0),
            probing: AtomicBool::new(false),
            #[cfg(any(test, feature = "fuzzing"))]
            probes: true,
            epoch: Instant::now(),
            direct,
        }
    }

    /// Runs a script on a blocking connection, on this thread, within the
    /// store's timeout (a new connection, if one is needed, included).
    fn eval_direct(&self, direct: &DirectConnections, script: &Script, call: &redis::Cmd) -> Result<Value, Error> {
        let deadline = Instant::now() + self.options.timeout;
        let pid = std::process::id();
        let idle = direct.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let idle = idle.filter(|(owner, _)| *owner == pid).map(|(_, connection)| connection);
        let reused = idle.is_some();
        let connection = match idle {
            Some(connection) => connection,
            None => Self::connect_direct(direct, deadline, &self.options)?,
        };
        match Self::invoke_direct(connection, deadline, script, call) {
            Ok((value, connection)) => {
                Self::keep_idle(direct, pid, connection);
                Ok(value)
            }
            // An idle connection the server closed meanwhile (a restart,
            // `CLIENT KILL`, its idle-client `timeout`) fails at once, before
            // the script can have reached a server that runs it: once more,
            // on a new connection, within the same deadline — rather than a
            // spurious failure while Redis is up.
            Err(e) if reused && e.is_connection_dropped() && !e.is_timeout() => {
                let connection = Self::connect_direct(direct, deadline, &self.options)?;
                let (value, connection) =
                    Self::invoke_direct(connection, deadline, script, call).map_err(Self::timed)?;
                Self::keep_idle(direct, pid, connection);
                Ok(value)
            }
            // A connection that failed may hold a late reply: never reused.
            Err(e) => Err(Self::timed(e)),
        }
    }

    /// A new blocking connection, set up, within what is left of
    /// `deadline` (see the module docs).
    fn connect_direct(
        direct: &DirectConnections,
        deadline: Instant,
        options: &StoreOptions,
    ) -> Result<redis::Connection, Error> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Error::Timeout);
        }
        let attempt = options.connect_timeout.min(left).max(Duration::from_micros(1));
        let mut connection = direct.bare.get_connection_with_timeout(attempt).map_err(Self::timed)?;
        if direct.db != 0 {
            Self::within(&connection, deadline).map_err(Self::timed)?;
            redis::cmd("SELECT").arg(direct.db).query::<()>(&mut connection).map_err(Self::timed)?;
        }
        Ok(connection)
    }

    /// Bounds the next read and write on `connection` by what is left of
    /// `deadline` (an error once nothing is).
    fn within(connection: &redis::Connection, deadline: Instant) -> Result<(), redis::RedisError> {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(redis::RedisError::from(std::io::Error::from(std::io::ErrorKind::TimedOut)));
        }
        connection.set_read_timeout(Some(left))?;
        connection.set_write_timeout(Some(left))
    }

    /// Runs the script (`call`, its `EVALSHA`) on `connection`, within what
    /// is left of `deadline`, loading it first if the server has not; the
    /// connection comes back with the answer.
    fn invoke_direct(
        mut connection: redis::Connection,
        deadline: Instant,
        script: &Script,
        call: &redis::Cmd,
    ) -> Result<(Value, redis::Connection), redis::RedisError> {
        Self::within(&connection, deadline)?;
        let value = match call.query::<Value>(&mut connection) {
            Err(e) if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::NoScript) => {
                Self::within(&connection, deadline)?;
                script.load(&mut connection)?;
                Self::within(&connection, deadline)?;
                call.query::<Value>(&mut connection)?
            }
            answer => answer?,
        };
        Ok((value, connection))
    }

    /// Keeps a connection that answered for the next blocking call.
    fn keep_idle(direct: &DirectConnections, pid: u32, connection: redis::Connection) {
        let mut idle = direct.idle.lock().unwrap_or_else(|p| p.into_inner());
        if idle.len() < MAX_IDLE_DIRECT {
            idle.push((pid, connection));
        }
    }

    /// A blocking connection's timeout as the multiplexed one reports it.
    fn timed(error: redis::RedisError) -> Error {
        if error.is_timeout() {
            Error::Timeout
        } else {
            Error::from(error)
        }
    }

    fn now_micros(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// `at` in microseconds since `epoch` (0 for an earlier time).
    fn micros_at(&self, at: Instant) -> u64 {
        at.saturating_duration_since(self.epoch).as_micros() as u64
    }

    fn is_down(&self) -> bool {
        self.now_micros() < self.down_until.load(Ordering::Relaxed)
    }

    fn mark_down(&self) {
        let until = self.now_micros() + self.options.retry_interval.as_micros() as u64;
        self.down_until.fetch_max(until, Ordering::Relaxed);
    }

    /// Marks Redis up or down after the outcome of a request sent at
    /// `sent` (see "When Redis counts as down").
    fn note(self: &Arc<Self>, result: &Result<Value, Error>, sent: Instant) {
        match result {
            Ok(_) => self.answered(),
            Err(Error::Timeout) => self.timed_out(sent),
            Err(Error::Redis(e)) if e.is_timeout() => self.timed_out(sent),
            Err(Error::Redis(e)) if is_unavailability(e) => self.mark_down(),
            // An error the server sent (a script's, say): an answer.
            Err(Error::Redis(e)) if e.code().is_some() => self.answered(),
            // A refusal of the credentials or of a command: an answer too.
            // (A failed TLS handshake, `Error::Tls`, is neither an answer
            // nor a failure to answer: retrying would fail the same way,
            // so it never marks the store down.)
            Err(Error::Auth(_)) => self.answered(),
            Err(_) => {}
        }
    }

    /// The server answered something: it is up.
    fn answered(&self) {
        self.last_answer.fetch_max(self.now_micros(), Ordering::Relaxed);
        self.mark_up();
    }

    /// A request sent at `sent` got no answer within the timeout: the
    /// store is marked down if the server answered nothing since, and (for
    /// a single server) a probe goes unanswered too.
    fn timed_out(self: &Arc<Self>, sent: Instant) {
        if self.last_answer.load(Ordering::Relaxed) > self.micros_at(sent) {
            return;
        }
        if self.direct.is_none() {
            return self.mark_down();
        }
        #[cfg(any(test, feature = "fuzzing"))]
        if !self.probes {
            return;
        }
        if self.probing.swap(true, Ordering::AcqRel) {
            return;
        }
        let inner = Arc::clone(self);
        runtime().spawn(async move {
            let started = Instant::now();
            if inner.ping().await {
                inner.answered();
            } else if inner.last_answer.load(Ordering::Relaxed) <= inner.micros_at(started) {
                // (Unless something else was answered meanwhile.)
                inner.mark_down();
            }
            inner.probing.store(false, Ordering::Release);
        });
    }

    /// Whether a single server answers a `PING` on a new connection within
    /// the timeout (a connection of its own: the store's others may be
    /// queued behind a slow request).
    async fn ping(&self) -> bool {
        let Some(direct) = self.direct.as_ref() else { return false };
        let ping = async {
            let mut connection = direct.client.get_multiplexed_async_connection().await?;
            redis::cmd("PING").query_async::<Value>(&mut connection).await
        };
        matches!(tokio::time::timeout(self.options.timeout, ping).await, Ok(Ok(_)))
    }

    fn mark_up(&self) {
        if self.down_until.load(Ordering::Relaxed) != 0 {
            self.down_until.store(0, Ordering::Relaxed);
        }
    }
}

/// The shortest and longest waits before a script is sent again while its
/// slot migrates (see [`StoreInner::invoke_migrating`]).
const MIGRATION_BACKOFF_MIN: Duration = Duration::from_millis(1);
const MIGRATION_BACKOFF_MAX: Duration = Duration::from_millis(20);
/// How many times a script is sent again after a `MOVED` that redis-rs
/// did not resolve: the nodes' views of a slot that just moved agree
/// within milliseconds.
const MAX_MOVED_RETRIES: u32 = 3;

impl StoreInner {
    /// Runs a script on a cluster, following its slot's migration until
    /// the call's deadline (the caller bounds this by the timeout).
    ///
    /// While a slot moves between masters, the servers answer a script
    /// with `ASK` (its keys are already on the target: ask there, after
    /// `ASKING`), `TRYAGAIN` (some of its keys moved and some not: a
    /// script touches several, such as the sliding log's two) or `MOVED`
    /// (the slot has a new master). redis-rs follows those itself, but only
    /// twice per command, and a script meets them in chains (`ASK`, then
    /// `NOSCRIPT` on a target that never ran it, then `ASK` again for the
    /// retry). None of these answers ran the script, so sending it again is
    /// safe: it is, after a short backoff, until it runs or the timeout
    /// passes — a migration is a normal event in a cluster, not Redis
    /// failing, and must not reach the caller or mark the store down. An
    /// `ASK` or a `TRYAGAIN` counts as the server answering. A `MOVED` does
    /// not, and is followed only [`MAX_MOVED_RETRIES`] more times: while a
    /// dead master's replica has not yet taken over, the other nodes answer
    /// `MOVED` to the dead node (seen 173 times in one failover test), and
    /// retrying those to the deadline made every call wait out its timeout
    /// (a batch of four 412 ms) instead of the store falling to the policy.
    async fn invoke_migrating(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
        mut connection: ClusterConnection,
    ) -> redis::RedisResult<Value> {
        let mut backoff = MIGRATION_BACKOFF_MIN;
        let mut moved = 0;
        loop {
            match invocation.invoke_async::<Value>(&mut connection).await {
                Err(e) if is_migration(&e) => {
                    if e.kind() == redis::ErrorKind::Server(redis::ServerErrorKind::Moved) {
                        // Also what nodes answer while a dead master's
                        // replica has not yet taken over (they send the
                        // client to the dead node): that is an outage,
                        // and the store must fall to the policy at once
                        // rather than spend every call's timeout here.
                        moved += 1;
                        if moved > MAX_MOVED_RETRIES {
                            return Err(e);
                        }
                    } else {
                        self.answered();
                    }
                    tokio::time::sleep(backoff).await;
                    backoff = (backoff * 2).min(MIGRATION_BACKOFF_MAX);
                }
                answer => return answer,
            }
        }
    }
}

/// Whether an error is a cluster's answer that a key's slot is moving, or
/// moved: the command did not run, and runs once sent again (where the
/// answer says).
fn is_migration(error: &redis::RedisError) -> bool {
    matches!(
        error.kind(),
        redis::ErrorKind::Server(
            redis::ServerErrorKind::Ask | redis::ServerErrorKind::Moved | redis::ServerErrorKind::TryAgain
        )
    )
}

/// Whether an error means that Redis cannot answer now (as opposed to an
/// answer that is an error, such as a script's).
pub(crate) fn is_unavailability(error: &redis::RedisError) -> bool {
    error.is_io_error()
        || error.is_connection_dropped()
        || error.is_connection_refusal()
        || error.is_timeout()
        || error.is_cluster_error()
        || matches!(
            error.kind(),
            redis::ErrorKind::Server(
                redis::ServerErrorKind::BusyLoading
                    | redis::ServerErrorKind::MasterDown
                    | redis::ServerErrorKind::TryAgain
                    | redis::ServerErrorKind::ClusterDown
                    | redis::ServerErrorKind::ReadOnly
            )
        )
        // Out of memory under `maxmemory` with `noeviction`: Redis cannot
        // keep state, so it cannot decide.
        || error.code() == Some("OOM")
        // A master under `min-replicas-to-write` with too few replicas in
        // reach refuses writes: it cannot decide (see SECURITY.md, "What a
        // failover can cost").
        || error.code() == Some("NOREPLICAS")
}

#[derive(Clone)]
enum Connection {
    Server(ConnectionManager),
    Cluster(ClusterConnection),
    /// A connection of the store's own, made again when it fails: to the
    /// master that Redis Sentinel names, or to a server whose TLS name is
    /// not the URL's host (see `reconnect.rs`).
    Reconnecting(Arc<Reconnecting>),
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match &self.inner.connection {
            Connection::Server(_) => "server",
            Connection::Cluster(_) => "cluster",
            Connection::Reconnecting(c) => match c.target() {
                Target::Sentinel(_) => "sentinel",
                Target::Server(_) => "server",
            },
        };
        f.debug_struct("RedisStore").field("kind", &kind).field("options", &self.inner.options).finish()
    }
}

/// The crate's runtime: one worker thread drives every connection and timer.
///
/// One per process: a child made by `fork` inherits the parent's runtime
/// but none of its threads (`fork` copies only the calling one), so every
/// task spawned there would wait forever. A process whose id is not the
/// runtime's builds its own (the parent's is leaked: dropping it would wait
/// for threads that do not exist). Stores connected before the fork still
/// belong to the parent; a child connects its own.
///
/// Every call reads two atomics; only the first call of a process takes the
/// lock (so a child never waits on a lock its parent held while forking,
/// unless a runtime was being built at that very moment).
fn runtime() -> &'static Runtime {
    static OWNER: AtomicU32 = AtomicU32::new(0);
    static CURRENT: AtomicPtr<Runtime> = AtomicPtr::new(std::ptr::null_mut());
    static BUILDING: Mutex<()> = Mutex::new(());
    let pid = std::process::id();
    if OWNER.load(Ordering::Acquire) == pid {
        // SAFETY: CURRENT was stored, from a leaked box, before OWNER
        // became this process's id (Release/Acquire), and is never freed.
        return unsafe { &*CURRENT.load(Ordering::Acquire) };
    }
    let _building = BUILDING.lock().unwrap_or_else(|p| p.into_inner());
    if OWNER.load(Ordering::Acquire) != pid {
        let runtime = Box::leak(Box::new(
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(1)
                .thread_name("ratekeeper-redis")
                .on_thread_start(block_sigpipe)
                .enable_all()
                .build()
                .expect("the ratekeeper-redis runtime could not start"),
        ));
        CURRENT.store(runtime, Ordering::Release);
        OWNER.store(pid, Ordering::Release);
    }
    // SAFETY: as above.
    unsafe { &*CURRENT.load(Ordering::Acquire) }
}

/// Blocks SIGPIPE on the calling thread: one of the runtime's, where every
/// socket write happens. A vectored write (`writev`, which takes no
/// `MSG_NOSIGNAL`) to a connection Redis has closed raises SIGPIPE, whose
/// default action ends the process. Rust's own `main`, CPython and Node
/// ignore it, but a C program linking the C binding need not — and it
/// would die with Redis (seen in the C binding's outage test under
/// valgrind). Blocked on these threads only, the signal stays pending
/// there, the write fails with `EPIPE` (an unavailability, as a reset
/// connection is), and the host's own handling of SIGPIPE is left alone.
#[cfg(unix)]
fn block_sigpipe() {
    // SAFETY: a sigset_t is plain data that sigemptyset initialises; these
    // calls only read and write that local set and this thread's mask.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGPIPE);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
    }
}

#[cfg(not(unix))]
fn block_sigpipe() {}

impl DirectConnections {
    /// The blocking connections of `client`'s server: set up bare (no
    /// `CLIENT SETINFO`, database 0, selected by hand) so that every command
    /// of a connection's set-up is bounded by the call's deadline.
    fn new(client: &redis::Client) -> Result<Self, Error> {
        let info = client.get_connection_info();
        let settings = info.redis_settings();
        let bare =
            redis::Client::open(info.clone().set_redis_settings(settings.clone().set_db(0).set_skip_set_lib_name()))?;
        Ok(DirectConnections { client: client.clone(), bare, db: settings.db(), idle: Mutex::new(Vec::new()) })
    }
}

impl RedisStore {
    /// Connects to one server (`redis://host:port/db`), waiting at most
    /// `options.connect_timeout` for the first connection. Options outside
    /// their domains are refused first ([`StoreOptions::checked`]).
    ///
    /// With a TLS [`server_name`](TlsOptions::server_name), every call
    /// goes through the one multiplexed connection, blocking calls
    /// included (see the module docs).
    pub fn connect(url: &str, options: StoreOptions) -> Result<Self, Error> {
        let options = options.checked()?;
        let dial = crate::tls::client(url, &options)?;
        if let Some(reroute) = dial.reroute {
            let target = Target::Server(Box::new(Server::new(dial.client, reroute)));
            return Self::connect_reconnecting(target, options.connect_timeout, options);
        }
        let client = dial.client;
        let direct = DirectConnections::new(&client)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(options.connect_timeout))
            .set_response_timeout(Some(options.timeout))
            // Reconnect quickly once the server answers again: decisions
            // must come back to Redis within a second of it returning.
            .set_min_delay(Duration::from_millis(10))
            .set_max_delay(Duration::from_millis(200))
            .set_number_of_retries(2);
        let connect_timeout = options.connect_timeout;
        let manager = Self::block_on(async move {
            tokio::time::timeout(connect_timeout, client.get_connection_manager_with_config(config))
                .await
                .map_err(|_| Error::Timeout)?
                .map_err(Error::from)
        })?;
        Ok(RedisStore { inner: Arc::new(StoreInner::new(Connection::Server(manager), options, Some(direct))) })
    }

    /// A single server's store that connects only when a call needs Redis:
    /// never, for a [`ScriptPipe`](crate::ScriptPipe), whose host does the
    /// I/O. What the pipe's own tests and its fuzz target (fuzz/,
    /// `redis_reply`) drive a pipe with, no server needed.
    ///
    /// Nor does a timeout probe the server (see "When Redis counts as
    /// down"), so a timeout never marks this store down: a probe would
    /// connect to `url` and, on the runtime's thread, mark the store down
    /// whenever it failed, in real time — an order of events that a test
    /// driving a pipe step by step could neither predict nor repeat.
    #[cfg(any(test, feature = "fuzzing"))]
    #[doc(hidden)]
    pub fn unconnected(url: &str, options: StoreOptions) -> Result<Self, Error> {
        let options = options.checked()?;
        let client = redis::Client::open(url)?;
        let direct = DirectConnections::new(&client)?;
        // The manager's background task is spawned on the crate's runtime.
        let _runtime = runtime().enter();
        let manager = ConnectionManager::new_lazy_with_config(client, ConnectionManagerConfig::new())?;
        let mut inner = StoreInner::new(Connection::Server(manager), options, Some(direct));
        inner.probes = false;
        Ok(RedisStore { inner: Arc::new(inner) })
    }

    /// Forgets every failure and answer of Redis noted so far: the store
    /// up, as [`unconnected`](Self::unconnected) made it. For the fuzz
    /// target, whose runs share its stores: a new store for each run would
    /// halve its speed (its connection's task, ended when the store drops,
    /// is freed on the runtime's thread after the run, and libFuzzer takes
    /// frees it has not seen for a leak, and looks for it, every run).
    #[cfg(any(test, feature = "fuzzing"))]
    #[doc(hidden)]
    pub fn forget_outcomes(&self) {
        self.inner.down_until.store(0, Ordering::Relaxed);
        self.inner.last_answer.store(0, Ordering::Relaxed);
    }

    /// Connects to a Redis Cluster through any of its nodes
    /// (`redis://host:port`). Options are checked as by
    /// [`connect`](Self::connect).
    ///
    /// [`StoreOptions::username`] and [`password`](StoreOptions::password)
    /// apply to every node, and so does [`StoreOptions::tls`] (the nodes
    /// the cluster names are reached over TLS too, with the same CA and
    /// client certificate), except its
    /// [`server_name`](TlsOptions::server_name): a cluster's nodes are
    /// found by the addresses the cluster gives, each checked against its
    /// own certificate, and redis-rs has no way to check them all against
    /// another name ([`Error::Unsupported`]). With `rediss://` nodes and
    /// no `tls`, TLS with the system's roots.
    pub fn connect_cluster(nodes: &[&str], options: StoreOptions) -> Result<Self, Error> {
        let options = options.checked()?;
        let mut builder = redis::cluster::ClusterClient::builder(nodes.iter().copied());
        if nodes.iter().any(|node| node.starts_with("rediss:")) {
            crate::tls::install_crypto_provider();
        }
        if let Some(tls) = &options.tls {
            if tls.server_name.is_some() {
                return Err(Error::Unsupported(
                    "a TLS server_name for a Redis Cluster (each node is checked against its own address)",
                ));
            }
            crate::tls::install_crypto_provider();
            let mode = if tls.insecure_skip_verify { redis::TlsMode::Insecure } else { redis::TlsMode::Secure };
            builder = builder.tls(mode);
            if let Some(certificates) = crate::tls::certificates(tls)? {
                builder = builder.certs(certificates);
            }
        }
        if let Some(username) = &options.username {
            builder = builder.username(username.clone());
        }
        if let Some(password) = &options.password {
            builder = builder.password(password.clone());
        }
        let client = builder
            .connection_timeout(options.connect_timeout)
            .response_timeout(options.timeout)
            .retries(2)
            // redis-rs waits at least 1.28 s before retrying a `TRYAGAIN`
            // (or a `CLUSTERDOWN`) by default: longer than a decision may
            // take. Milliseconds are enough for a slot's migration to move
            // a key on (see `StoreInner::invoke_migrating`).
            .min_retry_wait(MIGRATION_BACKOFF_MIN.as_millis() as u64)
            .max_retry_wait(MIGRATION_BACKOFF_MAX.as_millis() as u64)
            .retry_wait_formula(2, 2)
            .build()?;
        let connect_timeout = options.connect_timeout * 4;
        let connection = Self::block_on(async move {
            tokio::time::timeout(connect_timeout, client.get_async_connection())
                .await
                .map_err(|_| Error::Timeout)?
                .map_err(Error::from)
        })?;
        Ok(RedisStore { inner: Arc::new(StoreInner::new(Connection::Cluster(connection), options, None)) })
    }

    /// Connects to the master that Redis Sentinel names `master_name`,
    /// asking the sentinels at `sentinels` (`redis://host:port`, each with
    /// its own credentials if it needs any: `redis://:password@host:port`
    /// or `redis://user:password@host:port`). Options are checked as by
    /// [`connect`](Self::connect); they are the master's connection's.
    ///
    /// The store follows a failover: when the master stops answering or
    /// answers `READONLY` (it was demoted), the sentinels are asked again —
    /// at most once per `retry_interval` while no master is found (a
    /// master that refuses the certificate or the password is no outage:
    /// the next call asks again), each ask within twice the
    /// `connect_timeout`, no call waiting past its `timeout` — and the
    /// store connects to the master they name then. Meanwhile decisions
    /// fail as unavailable and their limiter's policy decides. What a
    /// failover can cost (writes the old master acknowledged but had not
    /// replicated are lost) is in `SECURITY.md`, "What a failover can
    /// cost". Every call goes through the one multiplexed connection (no
    /// blocking connections of its own: see `reconnect.rs`). The master's
    /// connection takes the TLS options, a
    /// [`server_name`](TlsOptions::server_name) included: sentinels name
    /// masters by address.
    pub fn connect_sentinel(sentinels: &[&str], master_name: &str, options: StoreOptions) -> Result<Self, Error> {
        let options = options.checked()?;
        let bound = options.connect_timeout * 2;
        let target = Target::Sentinel(Sentinels::new(sentinels, master_name)?);
        Self::connect_reconnecting(target, bound, options)
    }

    /// A store on a [`Reconnecting`] connection to `target`, connected once
    /// within `bound`.
    fn connect_reconnecting(target: Target, bound: Duration, options: StoreOptions) -> Result<Self, Error> {
        let for_connect = options.clone();
        let connection = Self::block_on(async move {
            tokio::time::timeout(bound + Duration::from_millis(50), Reconnecting::connect(target, for_connect))
                .await
                .map_err(|_| Error::Timeout)?
        })?;
        Ok(RedisStore { inner: Arc::new(StoreInner::new(Connection::Reconnecting(connection), options, None)) })
    }

    /// The address (`host:port`) of the master a Sentinel store last found;
    /// `None` for another store, or while it looks for the master.
    pub fn sentinel_master(&self) -> Option<String> {
        match &self.inner.connection {
            Connection::Reconnecting(c) if matches!(c.target(), Target::Sentinel(_)) => c.address(),
            _ => None,
        }
    }

    /// The decision timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.options.timeout
    }

    /// The longest one attempt to connect may take.
    pub fn connect_timeout(&self) -> Duration {
        self.inner.options.connect_timeout
    }

    /// How long decisions stop trying Redis after it failed to answer.
    pub fn retry_interval(&self) -> Duration {
        self.inner.options.retry_interval
    }

    /// Whether this is a Redis Cluster.
    pub(crate) fn is_cluster(&self) -> bool {
        matches!(self.inner.connection, Connection::Cluster(_))
    }

    /// Whether Redis failed to answer within the last retry interval.
    pub fn is_down(&self) -> bool {
        self.inner.is_down()
    }

    /// Whether `other` is this store or a clone of it.
    pub(crate) fn is(&self, other: &RedisStore) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// A single server's connection details, when one TCP connection —
    /// with TLS or without — reaches it: what a
    /// [`ScriptPipe`](crate::ScriptPipe) needs, TLS settings included (the
    /// PEM files read now: `None` if one cannot be, and the store's own
    /// connection serves).
    pub(crate) fn pipe_target(&self) -> Option<(String, u16, redis::RedisConnectionInfo, Option<PipeTls>)> {
        let (host, port, settings, url_verifies) = match (&self.inner.direct, &self.inner.connection) {
            (Some(direct), _) => {
                let info = direct.client.get_connection_info();
                let settings = info.redis_settings().clone();
                match info.addr() {
                    redis::ConnectionAddr::Tcp(host, port) => (host.clone(), *port, settings, None),
                    redis::ConnectionAddr::TcpTls { host, port, insecure, .. } => {
                        (host.clone(), *port, settings, Some(!*insecure))
                    }
                    _ => return None,
                }
            }
            // A server name of the TLS options': the URL's host, and the
            // options' TLS (`tls` is given).
            (None, Connection::Reconnecting(c)) => match c.target() {
                Target::Server(server) => {
                    let (host, port, settings) = server.address();
                    (host, port, settings, None)
                }
                Target::Sentinel(_) => return None,
            },
            (None, _) => return None,
        };
        let read = |pem: &Option<crate::tls::Pem>, what| pem.as_ref().map(|p| p.read(what)).transpose().ok();
        let tls = match (&self.inner.options.tls, url_verifies) {
            (Some(options), _) => Some(PipeTls {
                ca: read(&options.ca, "CA")?,
                client_cert: read(&options.client_cert, "client certificate")?,
                client_key: read(&options.client_key, "client key")?,
                server_name: options.server_name.clone().unwrap_or_else(|| host.clone()),
                verify: !options.insecure_skip_verify,
            }),
            (None, Some(verify)) => {
                Some(PipeTls { ca: None, client_cert: None, client_key: None, server_name: host.clone(), verify })
            }
            (None, None) => None,
        };
        Some((host, port, settings, tls))
    }

    /// Marks Redis up or down after the outcome of a request sent at `sent`
    /// some other way than [`eval`](Self::eval) (a pipe's).
    pub(crate) fn note(&self, result: &Result<Value, Error>, sent: Instant) {
        self.inner.note(result, sent);
    }

    /// Runs `script` on `keys`/`args`, bounded by the store's timeout.
    pub(crate) fn eval(
        &self,
        script: Arc<Script>,
        keys: Vec<String>,
        args: Vec<String>,
    ) -> impl Future<Output = Result<Value, Error>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        // Decided now, on the thread that asks: whether this is a blocking
        // call running on its caller's thread.
        let direct = on_calling_thread() && inner.direct.is_some();
        async move {
            if inner.is_down() {
                return Err(Error::Unavailable);
            }
            let sent = Instant::now();
            if let (true, Some(connections)) = (direct, inner.direct.as_ref()) {
                let mut call = redis::cmd("EVALSHA");
                call.arg(script.get_hash()).arg(keys.len()).arg(&keys).arg(&args);
                let result = inner.eval_direct(connections, &script, &call);
                inner.note(&result, sent);
                return result;
            }
            let mut invocation = script.prepare_invoke();
            for key in &keys {
                invocation.key(key);
            }
            for arg in &args {
                invocation.arg(arg);
            }
            if let Connection::Reconnecting(connection) = &inner.connection {
                let result = connection.eval(invocation, inner.options.timeout).await;
                inner.note(&result, sent);
                return result;
            }
            let call = async {
                match inner.connection.clone() {
                    Connection::Server(mut c) => invocation.invoke_async::<Value>(&mut c).await,
                    Connection::Cluster(c) => inner.invoke_migrating(&invocation, c).await,
                    Connection::Reconnecting(_) => unreachable!("answered above"),
                }
            };
            let result = match tokio::time::timeout(inner.options.timeout, call).await {
                Err(_) => Err(Error::Timeout),
                // The connection's own response timeout (the same one) may
                // fire first: the same failure.
                Ok(Err(e)) if e.is_timeout() => Err(Error::Timeout),
                Ok(Err(e)) => Err(Error::from(e)),
                Ok(Ok(value)) => Ok(value),
            };
            inner.note(&result, sent);
            result
        }
    }

    /// Runs `future` on the store's runtime and waits for it on this thread.
    /// Works from any thread, including one inside another async runtime
    /// (which it blocks for the duration, as any blocking call would).
    ///
    /// Outside any Tokio runtime, the future runs on this thread (with the
    /// store's runtime as its context) and a single server's scripts use a
    /// blocking connection: see the module docs.
    pub fn block_on<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
        if tokio::runtime::Handle::try_current().is_err() && !on_calling_thread() {
            ON_CALLING_THREAD.with(|on| on.set(true));
            // Cleared however the future ends (a panic included).
            struct Clear;
            impl Drop for Clear {
                fn drop(&mut self) {
                    ON_CALLING_THREAD.with(|on| on.set(false));
                }
            }
            let _clear = Clear;
            return runtime().block_on(future);
        }
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime().spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().expect("the ratekeeper-redis runtime stopped")
    }

    /// Runs `future` on the store's runtime; the returned future, which any
    /// executor can poll, resolves to its output. Inside
    /// [`block_on`](Self::block_on) on its caller's thread, the future runs
    /// in place instead (it would only be waited for there).
    pub fn spawn<T: Send + 'static>(
        future: impl Future<Output = T> + Send + 'static,
    ) -> impl Future<Output = T> + Send + 'static {
        let spawned: Pin<Box<dyn Future<Output = T> + Send>> = if on_calling_thread() {
            Box::pin(future)
        } else {
            let handle = runtime().spawn(future);
            Box::pin(async move { handle.await.expect("a ratekeeper-redis task panicked") })
        };
        spawned
    }

    /// Runs `future` on the store's runtime and hands its output to
    /// `callback` there (for bindings: wake a Python or Node waiter).
    pub fn spawn_with<T: Send + 'static>(
        future: impl Future<Output = T> + Send + 'static,
        callback: impl FnOnce(T) + Send + 'static,
    ) {
        runtime().spawn(async move { callback(future.await) });
    }

    /// Sleeps on the store's runtime (async waits of the shared limiters).
    pub(crate) async fn sleep(duration: Duration) {
        tokio::time::sleep(duration).await
    }
}
