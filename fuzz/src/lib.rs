//! The fuzz targets' shared driver: what every target draws
//! ([`values`]), the contract every admission-style decision keeps
//! ([`contract`]), the bounds on what is admitted over time ([`bounds`]),
//! the std layer checked against the core on a manual clock ([`mirror`]),
//! one module per algorithm with its input and its run, and three for the
//! boundaries where input comes from outside: the C ABI ([`c_abi`]), the
//! CLI's trace files ([`trace`]) and the Redis replies a `ScriptPipe`
//! reads ([`redis_reply`]). Each file in `fuzz_targets/` is one
//! line that hands libFuzzer's input to a module's `run` (`redis_reply`'s
//! also installs the allocator that target watches).
//!
//! A run panics (and libFuzzer reports a crash) on a panic or an
//! arithmetic overflow in ratekeeper (the fuzz profile keeps overflow
//! checks and debug assertions on), and on any broken invariant.

pub mod bounds;
pub mod c_abi;
pub mod composite;
pub mod concurrency;
pub mod contract;
pub mod gcra;
pub mod leaky;
pub mod markers;
pub mod mirror;
pub mod redis_reply;
pub mod smooth;
pub mod token_bucket;
pub mod trace;
pub mod values;
pub mod windows;
