//! How a store finds the master that Redis Sentinel names
//! ([`RedisStore::connect_sentinel`](crate::RedisStore::connect_sentinel)),
//! and so follows a failover.
//!
//! The store holds one multiplexed connection to the current master (a
//! [`Reconnecting`](crate::reconnect::Reconnecting) one). When that master
//! stops answering (an I/O error, a dropped or refused connection, a
//! timeout with nothing answered on it since the call was sent) or answers
//! that it cannot take writes (`READONLY`: it is a replica now;
//! `MASTERDOWN`), the connection is forgotten, and the next call asks the
//! sentinels again which server is the master and connects to it.
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
//! A sentinel's store has no blocking connections of its own: every call
//! goes through the multiplexed connection (see `reconnect.rs` for why).
//!
//! The master's connection takes the store's TLS settings, its
//! [`server_name`](crate::TlsOptions::server_name) included: sentinels
//! name masters by IP address, so a certificate for a DNS name checks out
//! only with that name given.

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, ConnectionInfo, IntoConnectionInfo, Value};

use crate::error::Error;
use crate::reconnect::connection_config;
use crate::store::StoreOptions;

/// The sentinels to ask, and the name of the master to ask them for.
pub(crate) struct Sentinels {
    sentinels: Vec<ConnectionInfo>,
    master_name: String,
}

impl Sentinels {
    /// The sentinels at `urls` (`redis://[:password@]host:port`), to ask
    /// for `master_name`.
    pub(crate) fn new(urls: &[&str], master_name: &str) -> Result<Self, Error> {
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
        Ok(Sentinels { sentinels, master_name: master_name.to_owned() })
    }

    /// Asks every sentinel at once; the first master named that answers
    /// `ROLE` as a master, connected with `options`.
    pub(crate) async fn find_master(&self, options: &StoreOptions) -> Result<(String, MultiplexedConnection), Error> {
        let bound = options.connect_timeout * 2;
        let config = connection_config(options);
        let mut asks = tokio::task::JoinSet::new();
        for sentinel in &self.sentinels {
            let (sentinel, name, config) = (sentinel.clone(), self.master_name.clone(), config.clone());
            let options = options.clone();
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
    let config = master.config(config);
    let mut master = master.client.get_multiplexed_async_connection_with_config(&config).await?;
    let role: Value = redis::cmd("ROLE").query_async(&mut master).await?;
    match role {
        Value::Array(ref parts) if matches!(parts.first(), Some(Value::BulkString(r)) if r == b"master") => {
            Ok((address, master))
        }
        _ => Err(no_master(format!("{address}, named master by a sentinel, is not one (yet)"))),
    }
}

/// No master found: an unavailability (an I/O error, as a refused
/// connection is), so the store is marked down and the limiter's policy
/// decides.
pub(crate) fn no_master(why: String) -> Error {
    let why = if why.is_empty() { "no sentinel named a master".to_owned() } else { why };
    Error::Redis(redis::RedisError::from(std::io::Error::new(
        std::io::ErrorKind::NotConnected,
        format!("sentinel: {why}"),
    )))
}
