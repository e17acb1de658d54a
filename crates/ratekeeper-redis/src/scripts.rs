//! The Lua scripts, assembled from `lua/`: Java's arithmetic helpers, the
//! time source, then the algorithm.
//!
//! Every script reads the time from the server (`TIME`, as `NOW` in
//! microseconds), so the clocks of the clients never matter, and adds
//! `EXPIRY_SLACK_MS` (0) to its expiries. A test-only variant (feature
//! `test-clock`) reads the time from its last argument instead, so that the
//! conformance vectors can be replayed against Redis on a manual clock (and
//! keeps keys an hour longer, since the real clock that expires them does
//! not follow the test's).

use ratekeeper::Algorithm;
use redis::Script;

const JAVA: &str = include_str!("lua/java.lua");
const DECISION: &str = include_str!("lua/decision.lua");
const SMOOTH: &str = include_str!("lua/smooth.lua");
const GCRA: &str = include_str!("lua/gcra.lua");
const TOKEN_BUCKET: &str = include_str!("lua/token_bucket.lua");
const FIXED_WINDOW: &str = include_str!("lua/fixed_window.lua");
const SLIDING_WINDOW_COUNTER: &str = include_str!("lua/sliding_window_counter.lua");
const SLIDING_LOG: &str = include_str!("lua/sliding_log.lua");
const MEMBERSHIP: &str = include_str!("lua/membership.lua");
const CONCURRENCY: &str = include_str!("lua/concurrency.lua");
const FORGET: &str = include_str!("lua/forget.lua");
const COMPOSITE: &str = include_str!("lua/composite.lua");

/// Where a script's "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeSource {
    /// The server's `TIME`, in microseconds.
    Server,
    /// The script's last argument (tests only).
    #[cfg(feature = "test-clock")]
    Argument,
}

fn time_source(time: TimeSource) -> &'static str {
    match time {
        TimeSource::Server => concat!(
            "local NOW = redis.call('TIME')\nNOW = tonumber(NOW[1]) * 1000000 + tonumber(NOW[2])\n",
            "local EXPIRY_SLACK_MS = 0\n",
        ),
        // The test's clock does not move with the server's, by which keys
        // expire: let them live an hour longer than their state needs.
        #[cfg(feature = "test-clock")]
        TimeSource::Argument => concat!("local NOW = tonumber(ARGV[#ARGV])\n", "local EXPIRY_SLACK_MS = 3600000\n",),
    }
}

fn assemble(parts: &[&str]) -> Script {
    Script::new(&parts.concat())
}

/// Guava's SmoothRateLimiter (`lua/smooth.lua`).
pub(crate) fn smooth(time: TimeSource) -> Script {
    assemble(&[JAVA, time_source(time), SMOOTH])
}

/// The nodes' heartbeats (`lua/membership.lua`).
pub(crate) fn membership(time: TimeSource) -> Script {
    assemble(&[time_source(time), DECISION, MEMBERSHIP])
}

/// The leases of a shared concurrency limit (`lua/concurrency.lua`).
pub(crate) fn concurrency(time: TimeSource) -> Script {
    assemble(&[time_source(time), DECISION, CONCURRENCY])
}

/// Deletes a limiter's keys (`lua/forget.lua`): the resets. A script
/// rather than a bare `DEL` so that it travels as every other call does
/// (`EVALSHA`, the store's timeout, cluster routing by the first key), and
/// the commands a deployment grants stay the scripts' (see SECURITY.md).
pub(crate) fn forget() -> Script {
    Script::new(FORGET)
}

/// The script of `algorithm`, if it runs in Redis: each answers with a
/// `Decision` (`lua/decision.lua` and the algorithm's script) — except
/// GCRA, which answers with the TAT's lead for the client to decide with.
/// Every script takes the algorithm's parameters in the registry's order
/// (`Algorithm::parameters`). (The source: the caller needs it for `EVAL`
/// as well as the script.)
pub(crate) fn admission(algorithm: Algorithm, time: TimeSource) -> Option<String> {
    let body = match algorithm {
        // Its reply is not a Decision: the client computes that (see its header).
        Algorithm::Gcra => return Some([time_source(time), GCRA].concat()),
        Algorithm::TokenBucket => TOKEN_BUCKET,
        Algorithm::FixedWindow => FIXED_WINDOW,
        Algorithm::SlidingWindowCounter => SLIDING_WINDOW_COUNTER,
        Algorithm::SlidingLog => SLIDING_LOG,
        Algorithm::LeakyBucketMeter | Algorithm::LeakyBucketQueue | Algorithm::SlidingWindow => return None,
    };
    Some([time_source(time), DECISION, body].concat())
}

/// The script of a composite of `algorithms` (`lua/composite.lua`): each
/// algorithm's script wrapped as a function of its own `KEYS` and `ARGV`
/// (each once, however many parts run it), then the all-or-nothing rule
/// over them, so that the parts decide in one script run at one `NOW`.
/// `None` if one of them does not run in Redis.
pub(crate) fn composite(algorithms: &[Algorithm], time: TimeSource) -> Option<String> {
    let mut source = [time_source(time), DECISION, "local RUN = {}\n"].concat();
    let mut seen = Vec::new();
    for &algorithm in algorithms {
        if seen.contains(&algorithm) {
            continue;
        }
        seen.push(algorithm);
        let body = match algorithm {
            Algorithm::Gcra => GCRA,
            Algorithm::TokenBucket => TOKEN_BUCKET,
            Algorithm::FixedWindow => FIXED_WINDOW,
            Algorithm::SlidingWindowCounter => SLIDING_WINDOW_COUNTER,
            Algorithm::SlidingLog => SLIDING_LOG,
            Algorithm::LeakyBucketMeter | Algorithm::LeakyBucketQueue | Algorithm::SlidingWindow => return None,
        };
        // A script's top-level `return` ends its function instead; `KEYS`
        // and `ARGV` are the function's parameters, shadowing the run's.
        source.push_str(&format!("RUN['{}'] = function(KEYS, ARGV)\n{body}\nend\n", algorithm.wire_name()));
    }
    source.push_str(COMPOSITE);
    Some(source)
}
