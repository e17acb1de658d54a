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

use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::cluster_async::ClusterConnection;
use redis::{Script, Value};
use tokio::runtime::Runtime;

use crate::error::Error;

/// How a store connects, and how long a decision may take.
#[derive(Debug, Clone)]
pub struct StoreOptions {
    /// The longest any one decision may take, reconnection included. Past
    /// it the call fails with [`Error::Timeout`] and the limiter's
    /// unavailability policy decides. Default: 100 ms.
    pub timeout: Duration,
    /// The longest one attempt to connect may take. Default: 250 ms.
    pub connect_timeout: Duration,
    /// After Redis failed to answer (an I/O error, a refused connection, a
    /// timeout, a cluster that is down), decisions stop trying it for this
    /// long and fail at once with [`Error::Unavailable`] — so that a dead
    /// server costs each decision nothing, not a timeout — then the next
    /// decision tries again. Default: 200 ms, so decisions are back on
    /// Redis well within a second of it answering again.
    pub retry_interval: Duration,
}

impl Default for StoreOptions {
    fn default() -> Self {
        StoreOptions {
            timeout: Duration::from_millis(100),
            connect_timeout: Duration::from_millis(250),
            retry_interval: Duration::from_millis(200),
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
    epoch: Instant,
}

impl StoreInner {
    fn new(connection: Connection, options: StoreOptions) -> Self {
        StoreInner { connection, options, down_until: AtomicU64::new(0), epoch: Instant::now() }
    }

    fn now_micros(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    fn is_down(&self) -> bool {
        self.now_micros() < self.down_until.load(Ordering::Relaxed)
    }

    fn mark_down(&self) {
        let until = self.now_micros() + self.options.retry_interval.as_micros() as u64;
        self.down_until.fetch_max(until, Ordering::Relaxed);
    }

    fn mark_up(&self) {
        if self.down_until.load(Ordering::Relaxed) != 0 {
            self.down_until.store(0, Ordering::Relaxed);
        }
    }
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
}

#[derive(Clone)]
enum Connection {
    Server(ConnectionManager),
    Cluster(ClusterConnection),
}

impl std::fmt::Debug for RedisStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let kind = match self.inner.connection {
            Connection::Server(_) => "server",
            Connection::Cluster(_) => "cluster",
        };
        f.debug_struct("RedisStore").field("kind", &kind).field("options", &self.inner.options).finish()
    }
}

/// The crate's runtime: one worker thread drives every connection and timer.
fn runtime() -> &'static Runtime {
    static RUNTIME: OnceLock<Runtime> = OnceLock::new();
    RUNTIME.get_or_init(|| {
        tokio::runtime::Builder::new_multi_thread()
            .worker_threads(1)
            .thread_name("ratekeeper-redis")
            .enable_all()
            .build()
            .expect("the ratekeeper-redis runtime could not start")
    })
}

impl RedisStore {
    /// Connects to one server (`redis://host:port/db`), waiting at most
    /// `options.connect_timeout` for the first connection.
    pub fn connect(url: &str, options: StoreOptions) -> Result<Self, Error> {
        let client = redis::Client::open(url)?;
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
        Ok(RedisStore { inner: Arc::new(StoreInner::new(Connection::Server(manager), options)) })
    }

    /// Connects to a Redis Cluster through any of its nodes
    /// (`redis://host:port`).
    pub fn connect_cluster(nodes: &[&str], options: StoreOptions) -> Result<Self, Error> {
        let client = redis::cluster::ClusterClient::builder(nodes.iter().copied())
            .connection_timeout(options.connect_timeout)
            .response_timeout(options.timeout)
            .retries(2)
            .build()?;
        let connect_timeout = options.connect_timeout * 4;
        let connection = Self::block_on(async move {
            tokio::time::timeout(connect_timeout, client.get_async_connection())
                .await
                .map_err(|_| Error::Timeout)?
                .map_err(Error::from)
        })?;
        Ok(RedisStore { inner: Arc::new(StoreInner::new(Connection::Cluster(connection), options)) })
    }

    /// The decision timeout.
    pub fn timeout(&self) -> Duration {
        self.inner.options.timeout
    }

    /// How long decisions stop trying Redis after it failed to answer.
    pub fn retry_interval(&self) -> Duration {
        self.inner.options.retry_interval
    }

    /// Whether Redis failed to answer within the last retry interval.
    pub fn is_down(&self) -> bool {
        self.inner.is_down()
    }

    /// Runs `script` on `keys`/`args`, bounded by the store's timeout.
    pub(crate) fn eval(
        &self,
        script: Arc<Script>,
        keys: Vec<String>,
        args: Vec<String>,
    ) -> impl Future<Output = Result<Value, Error>> + Send + 'static {
        let inner = Arc::clone(&self.inner);
        async move {
            if inner.is_down() {
                return Err(Error::Unavailable);
            }
            let mut invocation = script.prepare_invoke();
            for key in &keys {
                invocation.key(key);
            }
            for arg in &args {
                invocation.arg(arg);
            }
            let call = async {
                match inner.connection.clone() {
                    Connection::Server(mut c) => invocation.invoke_async::<Value>(&mut c).await,
                    Connection::Cluster(mut c) => invocation.invoke_async::<Value>(&mut c).await,
                }
            };
            let result = match tokio::time::timeout(inner.options.timeout, call).await {
                Err(_) => Err(Error::Timeout),
                Ok(Err(e)) => Err(Error::Redis(e)),
                Ok(Ok(value)) => Ok(value),
            };
            match &result {
                Ok(_) => inner.mark_up(),
                Err(Error::Timeout) => inner.mark_down(),
                Err(Error::Redis(e)) if is_unavailability(e) => inner.mark_down(),
                Err(_) => {}
            }
            result
        }
    }

    /// Runs `future` on the store's runtime and waits for it on this thread.
    /// Works from any thread, including one inside another async runtime
    /// (which it blocks for the duration, as any blocking call would).
    pub fn block_on<T: Send + 'static>(future: impl Future<Output = T> + Send + 'static) -> T {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        runtime().spawn(async move {
            let _ = tx.send(future.await);
        });
        rx.recv().expect("the ratekeeper-redis runtime stopped")
    }

    /// Runs `future` on the store's runtime; the returned future, which any
    /// executor can poll, resolves to its output.
    pub fn spawn<T: Send + 'static>(
        future: impl Future<Output = T> + Send + 'static,
    ) -> impl Future<Output = T> + Send + 'static {
        let handle = runtime().spawn(future);
        async move { handle.await.expect("a ratekeeper-redis task panicked") }
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
