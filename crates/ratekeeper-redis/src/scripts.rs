//! The Lua scripts, assembled from `lua/`: Java's arithmetic helpers, the
//! time source, then the algorithm.
//!
//! Every script reads the time from the server (`TIME`), so the clocks of
//! the clients never matter. A test-only variant (feature `test-clock`)
//! reads it from its last argument instead, so that the conformance vectors
//! can be replayed against Redis on a manual clock.

use redis::Script;

const JAVA: &str = include_str!("lua/java.lua");
const SMOOTH: &str = include_str!("lua/smooth.lua");

/// Where a script's "now" comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TimeSource {
    /// The server's `TIME`, in microseconds.
    Server,
    /// The script's last argument (tests only).
    #[cfg(feature = "test-clock")]
    Argument,
}

fn assemble(algorithm: &str, time: TimeSource) -> Script {
    let now = match time {
        TimeSource::Server => {
            "local function now_micros()\n  local t = redis.call('TIME')\n  return tonumber(t[1]) * 1000000 + tonumber(t[2])\nend\n"
        }
        #[cfg(feature = "test-clock")]
        TimeSource::Argument => "local function now_micros() return tonumber(ARGV[#ARGV]) end\n",
    };
    Script::new(&format!("{JAVA}\n{now}\n{algorithm}"))
}

/// Guava's SmoothRateLimiter (`lua/smooth.lua`).
pub(crate) fn smooth(time: TimeSource) -> Script {
    assemble(SMOOTH, time)
}
