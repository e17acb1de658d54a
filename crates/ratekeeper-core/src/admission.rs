//! [`Admission`]: the one interface of every admission-style algorithm.
//!
//! A request of some cost arrives at some time; the algorithm admits it
//! (consuming the cost) or refuses it (consuming nothing), and says so with a
//! [`Decision`]. Token bucket, GCRA, both leaky buckets and all four window
//! algorithms implement this trait, which is what lets a composite limit
//! combine any of them and the std layer wrap all of them the same way.
//!
//! Costs are `u64`. A cost of 0 asks "what is the state?" without taking
//! anything: it is always admitted (redis-cell's `quantity` 0), with one
//! exception: the token bucket refuses it while reservations hold the
//! bucket in debt, as x/time/rate's `AllowN(t, 0)` does.

use crate::decision::Decision;
use crate::error::{Argument, Error};

/// An algorithm that admits or refuses requests of a given cost at a given
/// time (whole microseconds since the limiter was created).
///
/// Implementations never panic, whatever the arguments: times may go
/// backwards (they are then treated as the latest time seen, so no quota is
/// minted) and costs may exceed anything the limiter can hold (refused with
/// a retry-after of [`NEVER`](crate::NEVER)).
pub trait Admission {
    /// Admits `cost` units at `now_micros` if the algorithm allows it, and
    /// consumes them; a refusal changes nothing.
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision;

    /// The decision [`check`](Self::check) would make, without consuming
    /// anything.
    fn peek(&self, cost: u64, now_micros: i64) -> Decision;
}

/// A cost from a binding's signed integer: not negative. (Every `u64` is a
/// valid cost for the algorithms; those whose arithmetic is on `i64`
/// saturate.)
pub fn cost_from_i64(cost: i64) -> Result<u64, Error> {
    unsigned_from_i64(Argument::Cost, cost)
}

/// Any count or size from a binding's signed integer: negative values are an
/// invalid `argument`. The algorithms then check their own upper bounds.
pub fn unsigned_from_i64(argument: Argument, value: i64) -> Result<u64, Error> {
    u64::try_from(value).map_err(|_| Error::invalid_int(argument, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn costs_from_bindings() {
        assert_eq!(cost_from_i64(0), Ok(0));
        assert_eq!(cost_from_i64(i64::MAX), Ok(i64::MAX as u64));
        assert_eq!(cost_from_i64(-1), Err(Error::invalid_int(Argument::Cost, -1)));
    }
}
