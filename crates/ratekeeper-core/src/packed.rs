//! [`Packed`]: a state machine's whole state as a fixed number of `u64`s.
//!
//! A decision reads a few words of state and writes back one or two. When
//! those words can be copied in and out of atomics, a concurrent wrapper can
//! take a snapshot without a lock, compute the decision on the copy, and
//! publish it with a single compare-and-swap on a version counter (a
//! seqlock), so the lock is held for a few stores rather than for the whole
//! computation. The std crate's shared limiters work this way.
//!
//! Packing is exact: `unpack(pack(x)) == x` bit for bit, doubles included.

/// A value that converts losslessly to and from `N` words.
pub trait Packed<const N: usize>: Sized {
    /// How many leading words a decision (a reservation, an admission) can
    /// change. The others change only when the limiter is reconfigured (a new
    /// rate, say), so a wrapper may publish a decision by storing just these.
    const HOT: usize;

    /// The value as `N` words. Words that change on the hot path (a
    /// decision) come first, so that they share a cache line with whatever
    /// the wrapper keeps in front of them.
    fn pack(&self) -> [u64; N];

    /// The value back from words produced by [`pack`](Self::pack). Any words
    /// give *some* value (never undefined behaviour); only words from `pack`
    /// give a meaningful one.
    fn unpack(words: [u64; N]) -> Self;
}
