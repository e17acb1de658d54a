//! [`Reconnecting`]: a multiplexed connection of the store's own that is
//! dropped when its server stops answering and made again, by the next
//! call, to the server a [`Target`] names then.
//!
//! Two kinds of store need this rather than redis-rs's `ConnectionManager`,
//! which reconnects by itself but only ever to its client's URL, resolved
//! by the system:
//!
//! * a Sentinel store, whose server is whichever master the sentinels name
//!   now (see `sentinel.rs`);
//! * a store whose TLS [`server_name`](crate::TlsOptions::server_name)
//!   differs from the URL's host (connecting by IP address, or through a
//!   tunnel or proxy whose name is not the server's). redis-rs takes the
//!   host of its connection's address both as where to connect and as the
//!   name the certificate must carry; the one way to tell it apart is a
//!   client whose host is the server name, with a DNS resolver that sends
//!   that name to the URL's host. Only a connection made with an
//!   [`AsyncConnectionConfig`] takes a resolver: the `ConnectionManager`
//!   does not (redis-rs 1.8), nor do blocking connections.
//!
//! The one piece of code serves both: the Sentinel store's master
//! connection already had to be kept and replaced by hand, and a fixed
//! server is the case where "finding the server" is connecting to it.
//!
//! When the connection stops answering (an I/O error, a dropped or refused
//! connection, a timeout with nothing answered on it since the call was
//! sent) or answers that it cannot take writes (`READONLY`, `MASTERDOWN`),
//! it is forgotten, and the next call makes a new one. Making one runs on
//! the crate's runtime, one attempt at a time (the calls that arrive
//! meanwhile wait for it), bounded in time (Sentinel: twice the store's
//! `connect_timeout`; a server: the `connect_timeout`), and a call waits
//! for it only within what is left of its own timeout. An attempt that
//! could not reach a server is not repeated before the store's
//! `retry_interval` has passed: calls meanwhile fail at once with its
//! error, an unavailability (the limiter's policy decides), so a dead
//! server costs one attempt per interval, not one per decision. An attempt
//! that reached a server that refused it — its certificate
//! ([`Error::Tls`]) or the credentials ([`Error::Auth`]) — is no outage:
//! its calls get that error, and the next call tries again.
//!
//! A connection the server closed while idle (its `timeout`, a proxy's
//! idle limit, a restart) is found closed by the next call, which fails as
//! an unavailability: redis-rs reports a connection closed before the
//! script was written as it reports one closed after the script ran, and a
//! script that may have run is never sent again. That is what an async call
//! on a plain store's `ConnectionManager` meets too; only a plain store's
//! blocking calls, on connections of their own, can tell the two apart.
//!
//! Such a store has no blocking connections of its own (see the module
//! docs of `store.rs`): for Sentinel, those would be a second set of
//! connections that must follow the master, and a blocking call that found
//! its master gone would have to ask the sentinels on the caller's thread;
//! for a server name, redis-rs's blocking connections take no resolver. So
//! every call, blocking ones included, goes through the multiplexed
//! connection, as a cluster's do: a blocking caller pays the two thread
//! wake-ups per decision that the direct path saves a plain single
//! server's.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, Value};
use tokio::sync::Notify;

use crate::error::Error;
use crate::sentinel::Sentinels;
use crate::store::StoreOptions;
use crate::tls::Reroute;

/// Where a [`Reconnecting`] connection goes.
pub(crate) enum Target {
    /// The master the sentinels name.
    Sentinel(Sentinels),
    /// One server, reached through a resolver (see the module docs).
    Server(Box<Server>),
}

/// One server whose certificate's name is not the URL's host.
pub(crate) struct Server {
    /// The client: its host is the TLS server name.
    client: redis::Client,
    /// Where that name really goes: the URL's host.
    reroute: Reroute,
}

impl Server {
    pub(crate) fn new(client: redis::Client, reroute: Reroute) -> Self {
        Server { client, reroute }
    }

    /// The URL's host and port, and the connection's settings (what a
    /// [`ScriptPipe`](crate::ScriptPipe) connects with).
    pub(crate) fn address(&self) -> (String, u16, redis::RedisConnectionInfo) {
        let settings = self.client.get_connection_info().redis_settings().clone();
        (self.reroute.host().to_owned(), self.reroute.port(), settings)
    }

    async fn connect(&self, options: &StoreOptions) -> Result<(String, MultiplexedConnection), Error> {
        let config = connection_config(options).set_dns_resolver(self.reroute.clone());
        let connecting = self.client.get_multiplexed_async_connection_with_config(&config);
        let connection = tokio::time::timeout(options.connect_timeout, connecting)
            .await
            .map_err(|_| Error::Timeout)?
            .map_err(Error::from)?;
        let (host, port, _) = self.address();
        let address = if host.contains(':') { format!("[{host}]:{port}") } else { format!("{host}:{port}") };
        Ok((address, connection))
    }
}

/// The settings of every connection a [`Reconnecting`] makes: the store's
/// timeouts.
pub(crate) fn connection_config(options: &StoreOptions) -> AsyncConnectionConfig {
    AsyncConnectionConfig::new()
        .set_connection_timeout(Some(options.connect_timeout))
        .set_response_timeout(Some(options.timeout))
}

/// A multiplexed connection to the server `target` names, made again after
/// it stopped answering (see the module docs).
pub(crate) struct Reconnecting {
    target: Target,
    options: StoreOptions,
    state: Mutex<State>,
    /// Woken when an attempt to connect ends, connected or not.
    attempted: Notify,
    epoch: Instant,
    /// Microseconds since `epoch` when the current connection last answered.
    last_answer: AtomicU64,
}

#[derive(Default)]
struct State {
    /// The connection, which one it is (counted from 1), and the address
    /// it goes to (`host:port`).
    current: Option<(u64, MultiplexedConnection, String)>,
    generation: u64,
    connecting: bool,
    /// When the last attempt that failed started.
    failed_at: Option<Instant>,
    /// Why it failed.
    failure: Option<Error>,
}

impl Reconnecting {
    /// `target`, connected once: the attempt's error if that fails.
    pub(crate) async fn connect(target: Target, options: StoreOptions) -> Result<Arc<Reconnecting>, Error> {
        let connection = Arc::new(Reconnecting {
            target,
            options,
            state: Mutex::new(State::default()),
            attempted: Notify::new(),
            epoch: Instant::now(),
            last_answer: AtomicU64::new(0),
        });
        let (address, first) = connection.find().await?;
        let mut state = connection.lock();
        state.generation = 1;
        state.current = Some((1, first, address));
        drop(state);
        Ok(connection)
    }

    /// Where this connection goes.
    pub(crate) fn target(&self) -> &Target {
        &self.target
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn now_micros(&self) -> u64 {
        self.epoch.elapsed().as_micros() as u64
    }

    /// The address (`host:port`) of the current connection's server.
    pub(crate) fn address(&self) -> Option<String> {
        self.lock().current.as_ref().map(|(_, _, address)| address.clone())
    }

    /// Runs `invocation` within `timeout`, connecting first if the last
    /// connection was forgotten.
    pub(crate) async fn eval(
        self: &Arc<Self>,
        invocation: redis::ScriptInvocation<'_>,
        timeout: Duration,
    ) -> Result<Value, Error> {
        let sent = self.now_micros();
        let generation = AtomicU64::new(0);
        let call = async {
            let (g, mut connection) = self.connection().await?;
            generation.store(g, Ordering::Relaxed);
            invocation.invoke_async::<Value>(&mut connection).await.map_err(|e| match e {
                e if e.is_timeout() => Error::Timeout,
                e => Error::from(e),
            })
        };
        let result = tokio::time::timeout(timeout, call).await.unwrap_or(Err(Error::Timeout));
        let generation = generation.into_inner();
        match &result {
            Ok(_) => self.answered(),
            Err(Error::Timeout) => {
                // Nothing on this connection since the call went out: the
                // server may be frozen, or cut off. (One slow call alone is
                // not enough.)
                if self.last_answer.load(Ordering::Relaxed) <= sent {
                    self.forget(generation);
                }
            }
            Err(Error::Redis(e)) if crate::store::is_unavailability(e) => self.forget(generation),
            Err(Error::Redis(e)) if e.code().is_some() => self.answered(),
            // A refusal of the credentials or a command: the server answered.
            Err(Error::Auth(_)) => self.answered(),
            Err(_) => {}
        }
        result
    }

    fn answered(&self) {
        self.last_answer.fetch_max(self.now_micros(), Ordering::Relaxed);
    }

    /// Forgets connection `generation` (if it is still the current one):
    /// the next call makes a new one.
    fn forget(&self, generation: u64) {
        let mut state = self.lock();
        if matches!(state.current, Some((g, ..)) if g == generation) {
            state.current = None;
        }
    }

    /// The current connection, or the one an attempt makes.
    async fn connection(self: &Arc<Self>) -> Result<(u64, MultiplexedConnection), Error> {
        loop {
            let attempted = self.attempted.notified();
            tokio::pin!(attempted);
            {
                let mut state = self.lock();
                if let Some((generation, connection, _)) = &state.current {
                    return Ok((*generation, connection.clone()));
                }
                if !state.connecting {
                    let recently = state.failed_at.is_some_and(|at| at.elapsed() < self.options.retry_interval);
                    if recently {
                        return Err(state.failure.clone().unwrap_or_else(|| self.no_connection()));
                    }
                    state.connecting = true;
                    let connection = Arc::clone(self);
                    crate::RedisStore::spawn_with(async move { connection.attempt().await }, |()| {});
                }
                // Registered before the lock is let go: an attempt that
                // ends from now on wakes this call.
                attempted.as_mut().enable();
            }
            attempted.await;
            let state = self.lock();
            if state.current.is_none() && !state.connecting {
                return Err(state.failure.clone().unwrap_or_else(|| self.no_connection()));
            }
        }
    }

    /// One attempt to connect (see the module docs), its outcome kept.
    async fn attempt(&self) {
        let started = Instant::now();
        let found = self.find().await;
        let mut state = self.lock();
        state.connecting = false;
        match found {
            Ok((address, connection)) => {
                state.generation += 1;
                state.current = Some((state.generation, connection, address));
                state.failed_at = None;
                state.failure = None;
            }
            // Only a failure to reach the server waits out the interval: a
            // refused certificate or password is no outage (the next call
            // tries again, as a `ConnectionManager` store's would).
            Err(e) if e.is_unavailability() => {
                state.failed_at = Some(started);
                state.failure = Some(e);
            }
            Err(e) => {
                state.failed_at = None;
                state.failure = Some(e);
            }
        }
        drop(state);
        self.attempted.notify_waiters();
    }

    /// A new connection to the server the target names now.
    async fn find(&self) -> Result<(String, MultiplexedConnection), Error> {
        match &self.target {
            Target::Sentinel(sentinels) => sentinels.find_master(&self.options).await,
            Target::Server(server) => server.connect(&self.options).await,
        }
    }

    /// An attempt that ended with no connection and no error kept (not
    /// expected): an unavailability.
    fn no_connection(&self) -> Error {
        match &self.target {
            Target::Sentinel(_) => crate::sentinel::no_master(String::new()),
            Target::Server(_) => Error::Redis(redis::RedisError::from(std::io::Error::new(
                std::io::ErrorKind::NotConnected,
                "no connection to the server",
            ))),
        }
    }
}
