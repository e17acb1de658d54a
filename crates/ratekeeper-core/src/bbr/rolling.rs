//! [`Rolling`]: the ring of per-bucket sums BBR keeps its statistics in, as
//! Kratos' `window.RollingCounter` (aegis `internal/window`) keeps them.
//!
//! Buckets are `bucket_micros` long and counted from the limiter's creation
//! (time 0). The ring remembers the bucket it last added to; adding to a
//! later bucket first empties every bucket skipped over, and reading at a
//! later bucket ignores those the window has left. What is kept is exactly
//! what Kratos keeps: per bucket, the sum of the values added and how many
//! were added.

/// The most buckets a BBR window may have (Kratos' default is 100). The
/// ring is a fixed array so that the core never allocates.
pub const MAX_BUCKETS: usize = 128;

/// One rolling counter: `size` buckets of sums and counts.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Rolling {
    sums: [u64; MAX_BUCKETS],
    counts: [u64; MAX_BUCKETS],
    size: usize,
    /// The ring position of the bucket last added to.
    offset: usize,
    /// The index (time / bucket length) of the bucket last added to.
    last_bucket: i64,
}

impl Rolling {
    /// An empty ring of `size` buckets (1..=[`MAX_BUCKETS`]), its current
    /// bucket the first.
    pub(crate) const fn new(size: usize) -> Self {
        Rolling { sums: [0; MAX_BUCKETS], counts: [0; MAX_BUCKETS], size, offset: 0, last_bucket: 0 }
    }

    /// Buckets passed since the last add, as Kratos' `timespan`. Callers
    /// never pass an earlier bucket (the std layer's times never go back).
    fn timespan(&self, bucket: i64) -> usize {
        let span = bucket.saturating_sub(self.last_bucket);
        if span < 0 {
            // Kratos treats a clock that went back as the whole window gone.
            self.size
        } else {
            usize::try_from(span).unwrap_or(usize::MAX)
        }
    }

    /// Adds `value` to the bucket of index `bucket`, emptying the buckets
    /// skipped since the last add (Kratos' `RollingPolicy.apply` then
    /// `Window.Add`).
    pub(crate) fn add(&mut self, bucket: i64, value: u64) {
        let span = self.timespan(bucket);
        if span > 0 {
            let cleared = span.min(self.size);
            for i in 1..=cleared {
                let at = (self.offset + i) % self.size;
                self.sums[at] = 0;
                self.counts[at] = 0;
            }
            self.offset = (self.offset + span % self.size) % self.size;
            self.last_bucket = bucket;
        }
        self.sums[self.offset] = self.sums[self.offset].saturating_add(value);
        self.counts[self.offset] += 1;
    }

    /// The buckets still in the window at bucket index `bucket`, oldest
    /// first, at most `size − 1` of them: Kratos' `Reduce` iterates the
    /// `size − timespan` live buckets, and BBR's reducers stop one short of
    /// the window, so the bucket being filled right now is never counted
    /// (its value is not final yet).
    pub(crate) fn settled(&self, bucket: i64) -> impl Iterator<Item = (u64, u64)> + '_ {
        let span = self.timespan(bucket);
        let live = self.size.saturating_sub(span);
        let first = (self.offset + span % self.size + 1) % self.size;
        let taken = live.min(self.size - 1);
        (0..taken).map(move |i| {
            let at = (first + i) % self.size;
            (self.sums[at], self.counts[at])
        })
    }
}
