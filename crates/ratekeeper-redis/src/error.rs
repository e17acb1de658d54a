//! The errors of the Redis-backed limiters.

use std::fmt;

use crate::options::InvalidOption;

/// What went wrong talking to a shared limiter.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum Error {
    /// A bad argument: the same checks, and the same error, as the local
    /// limiters. Nothing was sent to Redis.
    Invalid(ratekeeper_core::Error),
    /// An option only a shared limiter takes (a store's timeout, a
    /// heartbeat TTL: [`RedisOption`](crate::RedisOption)) outside its
    /// domain. Nothing was sent to Redis.
    InvalidOption(InvalidOption),
    /// Redis could not be reached or answered with an error.
    Redis(redis::RedisError),
    /// Redis did not answer within the store's timeout.
    Timeout,
    /// Redis failed to answer moments ago, and is not tried again until the
    /// store's retry interval has passed (see `StoreOptions`).
    Unavailable,
    /// The operation or algorithm does not run in Redis.
    Unsupported(&'static str),
    /// A script replied with something this client does not understand (a
    /// different version of the script under the same key, say).
    Protocol(String),
    /// Redis refused the credentials or a command: a wrong password or an
    /// unknown user (`WRONGPASS`), none given where one is needed
    /// (`NOAUTH`), or an ACL user not allowed a command or a key
    /// (`NOPERM`, named with what was refused). Not an unavailability: the
    /// server answered, so no policy decides instead and the store is not
    /// marked down.
    Auth(String),
    /// TLS could not be set up: the server's certificate is not trusted
    /// (an unknown CA), is for another name or has expired, the server
    /// refused the client's certificate, or the TLS settings themselves
    /// are unusable (a file that cannot be read, PEM with no certificate or
    /// key, a client certificate without its key). Not an unavailability:
    /// retrying would fail the same way, so the store is not marked down.
    Tls(String),
}

impl Error {
    /// Whether Redis could not answer (down, unreachable, too slow), as
    /// opposed to a bad argument or an answer that is an error.
    pub fn is_unavailability(&self) -> bool {
        match self {
            Error::Timeout | Error::Unavailable => true,
            Error::Redis(e) => crate::store::is_unavailability(e),
            _ => false,
        }
    }
}

impl From<ratekeeper_core::Error> for Error {
    fn from(e: ratekeeper_core::Error) -> Self {
        Error::Invalid(e)
    }
}

/// A redis-rs error, classified: a TLS handshake that failed on a
/// certificate is [`Error::Tls`], a refusal of the credentials or of a
/// command (`WRONGPASS`, `NOAUTH`, `NOPERM`) is [`Error::Auth`], anything
/// else [`Error::Redis`].
impl From<redis::RedisError> for Error {
    fn from(e: redis::RedisError) -> Self {
        if let Some(why) = crate::tls::handshake_failure(&e) {
            return Error::Tls(why);
        }
        if let Some(why) = crate::tls::access_refusal(&e) {
            return Error::Auth(why);
        }
        Error::Redis(e)
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Invalid(e) => e.fmt(f),
            Error::InvalidOption(e) => e.fmt(f),
            Error::Redis(e) => write!(f, "redis: {e}"),
            Error::Timeout => f.write_str("redis did not answer within the timeout"),
            Error::Unavailable => f.write_str("redis is unavailable (it failed moments ago; retrying shortly)"),
            Error::Unsupported(what) => f.write_str(what),
            Error::Protocol(what) => write!(f, "unexpected reply from a ratekeeper script: {what}"),
            Error::Auth(what) => write!(f, "redis refused access: {what}"),
            Error::Tls(what) => write!(f, "redis TLS: {what}"),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Error::Invalid(e) => Some(e),
            Error::Redis(e) => Some(e),
            Error::InvalidOption(_)
            | Error::Protocol(_)
            | Error::Auth(_)
            | Error::Tls(_)
            | Error::Timeout
            | Error::Unavailable
            | Error::Unsupported(_) => None,
        }
    }
}
