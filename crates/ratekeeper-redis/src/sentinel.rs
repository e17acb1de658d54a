//! A store's connection to the master that Redis Sentinel names
//! ([`RedisStore::connect_sentinel`](crate::RedisStore::connect_sentinel)),
//! and how it follows a failover.
//!
//! The store holds one multiplexed connection to the current master. When
//! that master stops answering (an I/O error, a dropped or refused
//! connection, a timeout with nothing answered on it since the call was
//! sent) or answers that it cannot take writes (`READONLY`: it is a replica
//! now; `MASTERDOWN`), the connection is forgotten, and the next call asks
//! the sentinels again which server is the master and connects to it.
//!
//! Asking is bounded twice over. In time: one ask — every sentinel asked at
//! once (`SENTINEL GET-MASTER-ADDR-BY-NAME`), the master each names
//! connected to and checked with `ROLE` (a server that calls itself a
//! replica is not taken, whatever a sentinel that has not yet seen the
//! failover says), the first such master taken — runs on the crate's
//! runtime within twice the store's `connect_timeout`, and a call waits for
//! it only within what is left of its own timeout. In number: an ask that
//! found no master is not repeated before the store's `retry_interval` has
//! passed (calls meanwhile fail at once as unavailable, and their
//! limiter's policy decides), so a dead master or dead sentinels cost
//! Sentinel one round of questions per interval, not one per decision.
//!
//! Why this asks the sentinels itself rather than through redis-rs's
//! `SentinelClient`: the master's connection must be made with the
//! store's own options (its timeouts, and the master's credentials), and
//! the ask must be bounded by them; the client's connections to the
//! sentinels and to the master it checks have no timeout of their own.
//!
//! Why a sentinel's store has no blocking connections of its own (see the
//! module docs of `store.rs`): those would be a second set of connections
//! that must follow the master too, and a blocking call that found its
//! master gone would have to ask the sentinels on the caller's thread. So
//! every call, blocking ones included, goes through the multiplexed
//! connection, as a cluster's do: a blocking caller pays the two thread
//! wake-ups per decision that the direct path saves a single server's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionInfo, IntoConnectionInfo, Value};
use tokio::sync::Notify;

use crate::error::Error;
use crate::store::StoreOptions;

/// The sentinels, the master they name, and the connection to it.
pub(crate) struct SentinelConnection {
    sentinels: Vec<ConnectionInfo>,
    master_name: String,
    options: StoreOptions,
    state: Mutex<State>,
    /// Woken when an ask ends, found or not.
    asked: Notify,
    epoch: Instant,
    /// Microseconds since `epoch` when the current master last answered.
    last_answer: AtomicU64,
}

#[derive(Default)]
struct State {
    /// The master's connection, and which one it is (counted from 1).
    master: Option<(u64, MultiplexedConnection, String)>,
    generation: u64,
    asking: bool,
    /// When the last ask that found no master started.
    failed_at: Option<Instant>,
    /// Why it found none.
    failure: Option<Error>,
}

impl SentinelConnection {
    /// The sentinels at `urls` (`redis://[:password@]host:port`) asked for
    /// `master_name`, connected once: an error if no sentinel names a
    /// master that answers as one within the connect timeout.
    pub(crate) async fn connect(
        urls: &[&str],
        master_name: &str,
        options: StoreOptions,
    ) -> Result<Arc<SentinelConnection>, Error> {
        if urls.is_empty() {
            return Err(Error::Redis(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "connect_sentinel: no sentinel given",
            ))));
        }
        if master_name.is_empty() {
            return Err(Error::Redis(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "connect_sentinel: the master's name is empty",
            ))));
        }
        let sentinels = urls.iter().map(|url| url.into_connection_info()).collect::<Result<Vec<_>, _>>()?;
        let connection = Arc::new(SentinelConnection {
            sentinels,
            master_name: master_name.to_owned(),
            options,
            state: Mutex::new(State::default()),
            asked: Notify::new(),
            epoch: Instant::now(),
            last_answer: AtomicU64::new(0),
        });
        let (address, master) = connection.find_master().await?;
        let mut state = connection.lock();
        state.generation = 1;
        state.master = Some((1, master, address));
        drop(state);
        Ok(connection)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_micros(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// The master's address as last found (`host:port`).
    pub(crate) fn master_address(&self) -> Option<String> {
        self.lock().master.as_ref().map(|(_, _, address)| address.clone())
    }

    /// Runs `invocation` on the master within `timeout`, asking the
    /// sentinels for it first if the last one was forgotten.
    pub(crate) async fn eval(
        self: &Arc<Self>,
        invocation: redis::ScriptInvocation<'_>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        let sent = self.now_micros();
        let generation = AtomicU64::new(0);
        let call = async {
            let (g, mut master) = self.master().await?;
            generation.store(g, Ordering::Relaxed);
            invocation.invoke_async::<Value>(&mut master).await.map_err(|e| match e {
                e if e.is_timeout() => Error::Timeout,
                e => Error::from(e),
            })
        };
        let result = tokio::time::timeout(timeout, call).await.unwrap_or(Err(Error::Timeout));
        let generation = generation.into_inner();
        match &result {
            Ok(_) => self.answered(),
            Err(Error::Timeout) => {
                // Nothing from this master since the call went out: it may
                // be frozen, or cut off. (One slow call alone is not enough.)
                if self.last_answer.load(Ordering::Relaxed) <= sent {
                    self.forget(generation);
                }
            }
            Err(Error::Redis(e)) if wants_new_master(e) => self.forget(generation),
            Err(Error::Redis(e)) if e.code().is_some() => self.answered(),
            // A refusal of the credentials or a command: the master answered.
            Err(Error::Auth(_)) => self.answered(),
            Err(_) => {}
        }
        result
    }

    fn answered(&self) {
        self.last_answer.fetch_max(self.now_micros(), Ordering::Relaxed);
    }

    /// Forgets master `generation` (if it is still the current one): the
    /// next call asks the sentinels.
    fn forget(&self, generation: u64) {
        let mut state = self.lock();
        if matches!(state.master, Some((g, ..)) if g == generation) {
            state.master = None;
        }
    }

    /// The current master's connection, or the one an ask finds.
    async fn master(self: &Arc<Self>) -> Result<(u64, MultiplexedConnection), Error> {
        loop {
            let asked = self.asked.notified();
            tokio::pin!(asked);
            {
                let mut state = self.lock();
                if let Some((generation, master, _)) = &state.master {
                    return Ok((*generation, master.clone()));
                }
                if !state.asking {
                    let recently = state.failed_at.is_some_and(|at| at.elapsed() < self.options.retry_interval);
                    if recently {
                        return Err(state.failure.clone().unwrap_or_else(|| no_master(String::new())));
                    }
                    state.asking = true;
                    let connection = Arc::clone(self);
                    crate::RedisStore::spawn_with(async move { connection.ask().await }, |()| {});
                }
                // Registered before the lock is let go: an ask that ends
                // from now on wakes this call.
                asked.as_mut().enable();
            }
            asked.await;
            let state = self.lock();
            if state.master.is_none() && !state.asking {
                return Err(state.failure.clone().unwrap_or_else(|| no_master(String::new())));
            }
        }
    }

    /// One ask of the sentinels (see the module docs), its outcome kept.
    async fn ask(&self) {
        let started = Instant::now();
        let found = self.find_master().await;
        let mut state = self.lock();
        state.asking = false;
        match found {
            Ok((address, master)) => {
                state.generation += 1;
                state.master = Some((state.generation, master, address));
                state.failed_at = None;
                state.failure = None;
            }
            Err(e) => {
                state.failed_at = Some(started);
                state.failure = Some(e);
            }
        }
        drop(state);
        self.asked.notify_waiters();
    }

    /// Asks every sentinel at once; the first master named that answers
    /// `ROLE` as a master, connected.
    async fn find_master(&self) -> Result<(String, MultiplexedConnection), Error> {
        let bound = self.options.connect_timeout * 2;
        let config = AsyncConnectionConfig::new()
            .set_connection_timeout(Some(self.options.connect_timeout))
            .set_response_timeout(Some(self.options.timeout));
        let mut asks = tokio::task::JoinSet::new();
        for sentinel in &self.sentinels {
            let (sentinel, name, config) = (sentinel.clone(), self.master_name.clone(), config.clone());
            let options = self.options.clone();
            asks.spawn(async move { ask_one(sentinel, name, config, options).await });
        }
        let mut last_error = None;
        let all = async {
            while let Some(outcome) = asks.join_next().await {
                match outcome {
                    Ok(Ok(found)) => return Ok(found),
                    Ok(Err(e)) => last_error = Some(e),
                    Err(e) => last_error = Some(no_master(e.to_string())),
                }
            }
            Err(last_error.take().unwrap_or_else(|| no_master(String::new())))
        };
        match tokio::time::timeout(bound, all).await {
            Ok(found) => found,
            Err(_) => {
                Err(no_master(format!("the sentinels named no master that answered within {} ms", bound.as_millis())))
            }
        }
    }
}

/// Asks one sentinel for the master, connects to it, checks its role.
///
/// The sentinel's errors are unavailabilities whatever they are (its own
/// password refused, say, is still no master found); the master's are
/// classified as [`RedisStore::connect`](crate::RedisStore::connect)'s (a
/// refused password is [`Error::Auth`], an untrusted certificate
/// [`Error::Tls`]).
async fn ask_one(
    sentinel: ConnectionInfo,
    name: String,
    config: AsyncConnectionConfig,
    options: StoreOptions,
) -> Result<(String, MultiplexedConnection), Error> {
    let asked = async {
        let client = redis::Client::open(sentinel)?;
        let mut connection = client.get_multiplexed_async_connection_with_config(&config).await?;
        redis::cmd("SENTINEL")
            .arg("GET-MASTER-ADDR-BY-NAME")
            .arg(&name)
            .query_async::<Option<(String, u16)>>(&mut connection)
            .await
    };
    let named = asked.await.map_err(|e| no_master(format!("a sentinel did not answer: {e}")))?;
    let Some((host, port)) = named else {
        return Err(no_master(format!("a sentinel knows no master named {name:?}")));
    };
    let address = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
    // The master's credentials and TLS are the store's options (the
    // sentinel gives only the address).
    let master = crate::tls::client(&format!("redis://{address}/"), &options)?;
    let mut master = master.get_multiplexed_async_connection_with_config(&config).await?;
    let role: Value = redis::cmd("ROLE").query_async(&mut master).await?;
    match role {
        Value::Array(ref parts) if matches!(parts.first(), Some(Value::BulkString(r)) if r == b"master") => {
            Ok((address, master))
        }
        _ => Err(no_master(format!("{address}, named master by a sentinel, is not one (yet)"))),
    }
}

/// Whether an error on the master's connection means it is gone or no
/// longer the master: ask the sentinels again.
fn wants_new_master(error: &redis::RedisError) -> bool {
    crate::store::is_unavailability(error)
}

/// No master found: an unavailability (an I/O error, as a refused
/// connection is), so the store is marked down and the limiter's policy
/// decides.
fn no_master(why: String) -> Error {
    let why = if why.is_empty() { "no sentinel named a master".to_owned() } else { why };
    Error::Redis(redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        format!("sentinel: {why}"),
    )))
}
