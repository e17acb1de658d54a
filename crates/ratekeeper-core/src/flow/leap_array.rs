//! Sentinel's sliding statistics: the leap array (`LeapArray`), its metric
//! buckets (`MetricBucket`, `BucketLeapArray`) and the arrays that let a
//! prioritized request occupy a window that has not begun yet
//! (`FutureBucketLeapArray`, `OccupiableBucketLeapArray`).
//!
//! A leap array is `sample_count` buckets of `interval_ms / sample_count`
//! milliseconds each, reused in a ring: the bucket for a time is found by
//! `(time / window_length) % sample_count` and emptied when it still holds
//! an older window. Reading the array keeps the buckets whose window began
//! at most `interval_ms` ago, so that a read at the very start of a window
//! still sees the whole previous interval until the bucket is reused.
//!
//! Time is whole milliseconds counted from the owner's creation, so windows
//! are aligned to it (Sentinel aligns them to the Unix epoch). Storage is a
//! fixed array of [`MAX_SAMPLE_COUNT`] buckets, so the core stays `no_std`
//! without an allocator; Sentinel's default is 2 buckets per second.

use crate::error::{Argument, Error};

/// The most buckets a leap array holds (Sentinel has no bound; its defaults
/// are 2 per second and 60 per minute, and its cluster rules 10).
pub const MAX_SAMPLE_COUNT: usize = 64;

/// The counters of one bucket: Sentinel's `MetricBucket` less the exception
/// count and the minimum RT, which no flow controller reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MetricBucket {
    /// Requests admitted (`PASS`).
    pub pass: u64,
    /// Requests refused (`BLOCK`).
    pub block: u64,
    /// Requests completed (`SUCCESS`).
    pub success: u64,
    /// The sum of the completed requests' RTs in milliseconds (`RT`).
    pub rt: u64,
    /// Prioritized requests admitted into a later window (`OCCUPIED_PASS`).
    pub occupied_pass: u64,
}

/// One window of a leap array: when it began and what it counts
/// (Sentinel's `WindowWrap`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Window<B> {
    /// The window's start, in milliseconds.
    pub start_ms: i64,
    /// Its counters.
    pub value: B,
}

impl<B> Window<B> {
    /// Whether `time_ms` falls in this window of `length_ms`.
    fn contains(&self, time_ms: i64, length_ms: i64) -> bool {
        self.start_ms <= time_ms && time_ms < self.start_ms.saturating_add(length_ms)
    }
}

/// Sentinel's `LeapArray` over buckets of type `B`, with room for `N`
/// buckets (at most `N` may be asked for); see the
/// [module documentation](self).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LeapArray<B, const N: usize = MAX_SAMPLE_COUNT> {
    window_length_ms: i64,
    sample_count: usize,
    interval_ms: i64,
    /// A future array (`FutureBucketLeapArray`) counts only the windows
    /// that have not begun; a plain one those of the last interval.
    future: bool,
    slots: [Option<Window<B>>; N],
}

/// Checks a leap array's shape as Sentinel's `LeapArray` constructor and
/// `FlowRuleUtil.isWindowConfigValid` do.
pub(crate) fn check_shape(sample_count: u32, interval_ms: u32, most: usize) -> Result<(), Error> {
    if interval_ms == 0 || interval_ms > i32::MAX as u32 {
        return Err(Error::invalid_int(Argument::IntervalMs, i64::from(interval_ms)));
    }
    if sample_count == 0 || sample_count as usize > most || interval_ms % sample_count != 0 {
        return Err(Error::invalid_int(Argument::SampleCount, i64::from(sample_count)));
    }
    Ok(())
}

impl<B: Copy, const N: usize> LeapArray<B, N> {
    /// A leap array of `sample_count` buckets over `interval_ms`: at most
    /// `N` buckets (and [`MAX_SAMPLE_COUNT`]), the interval evenly divided.
    pub fn new(sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        Self::with_kind(sample_count, interval_ms, false)
    }

    /// Sentinel's `FutureBucketLeapArray`: a leap array whose reads count
    /// only windows that begin after the time of the read.
    pub fn future(sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        Self::with_kind(sample_count, interval_ms, true)
    }

    fn with_kind(sample_count: u32, interval_ms: u32, future: bool) -> Result<Self, Error> {
        check_shape(sample_count, interval_ms, N.min(MAX_SAMPLE_COUNT))?;
        Ok(LeapArray {
            window_length_ms: i64::from(interval_ms / sample_count),
            sample_count: sample_count as usize,
            interval_ms: i64::from(interval_ms),
            future,
            slots: [None; N],
        })
    }

    /// Each bucket's length in milliseconds.
    pub fn window_length_ms(&self) -> i64 {
        self.window_length_ms
    }

    /// How many buckets.
    pub fn sample_count(&self) -> u32 {
        self.sample_count as u32
    }

    /// The whole interval in milliseconds.
    pub fn interval_ms(&self) -> i64 {
        self.interval_ms
    }

    /// The slot of `time_ms`. Floor division: before the owner's creation
    /// (the previous window of the first one) is a slot of its own, as the
    /// times before any Sentinel clock reading are.
    fn index(&self, time_ms: i64) -> usize {
        time_ms.div_euclid(self.window_length_ms).rem_euclid(self.sample_count as i64) as usize
    }

    /// The window holding `time_ms`, its bucket made fresh with
    /// `fresh(window_start)` when the slot is empty or holds an older
    /// window (Sentinel's `currentWindow`, `newEmptyBucket` and
    /// `resetWindowTo`). `None` for a negative time or one older than the
    /// slot's window: Sentinel then hands out a bucket it does not keep, so
    /// what is added to it is lost, as here.
    pub fn current_window(&mut self, time_ms: i64, fresh: impl FnOnce(i64) -> B) -> Option<&mut Window<B>> {
        if time_ms < 0 {
            return None;
        }
        let start_ms = time_ms - time_ms % self.window_length_ms;
        let index = self.index(time_ms);
        let slot = &mut self.slots[index];
        match slot {
            Some(old) if old.start_ms > start_ms => None,
            Some(old) if old.start_ms == start_ms => slot.as_mut(),
            _ => {
                *slot = Some(Window { start_ms, value: fresh(start_ms) });
                slot.as_mut()
            }
        }
    }

    /// Whether `window` no longer counts at `time_ms` (Sentinel's
    /// `isWindowDeprecated`).
    pub fn is_window_deprecated(&self, time_ms: i64, window: &Window<B>) -> bool {
        if self.future {
            time_ms >= window.start_ms
        } else {
            time_ms.saturating_sub(window.start_ms) > self.interval_ms
        }
    }

    /// The window just before the one of `time_ms`, if it was kept and
    /// still counts (Sentinel's `getPreviousWindow`).
    pub fn previous_window(&self, time_ms: i64) -> Option<&Window<B>> {
        if time_ms < 0 {
            return None;
        }
        let previous = time_ms - self.window_length_ms;
        let window = self.slots[self.index(previous)].as_ref()?;
        if self.is_window_deprecated(time_ms, window) || window.start_ms + self.window_length_ms < previous {
            return None;
        }
        Some(window)
    }

    /// The bucket of the window holding `time_ms`, if the array has it
    /// (Sentinel's `getWindowValue`).
    pub fn window_value(&self, time_ms: i64) -> Option<&B> {
        if time_ms < 0 {
            return None;
        }
        let window = self.slots[self.index(time_ms)].as_ref()?;
        window.contains(time_ms, self.window_length_ms).then_some(&window.value)
    }

    /// The windows that count at `time_ms` (Sentinel's `list`), in slot
    /// order.
    pub fn list(&self, time_ms: i64) -> impl Iterator<Item = &Window<B>> {
        let live = time_ms >= 0;
        self.slots[..self.sample_count].iter().flatten().filter(move |w| live && !self.is_window_deprecated(time_ms, w))
    }

    /// The buckets of [`list`](Self::list) (Sentinel's `values`).
    pub fn values(&self, time_ms: i64) -> impl Iterator<Item = &B> {
        self.list(time_ms).map(|w| &w.value)
    }

    /// The oldest window that still counts at `time_ms`: the one the next
    /// window will replace (Sentinel's `getValidHead`).
    pub fn valid_head(&self, time_ms: i64) -> Option<&Window<B>> {
        let window = self.slots[self.index(time_ms.saturating_add(self.window_length_ms))].as_ref()?;
        (!self.is_window_deprecated(time_ms, window)).then_some(window)
    }
}

impl<const N: usize> LeapArray<MetricBucket, N> {
    /// The window of `time_ms` in a plain bucket array (Sentinel's
    /// `BucketLeapArray`): a new window starts empty.
    pub fn current_bucket(&mut self, time_ms: i64) -> Option<&mut MetricBucket> {
        self.current_window(time_ms, |_| MetricBucket::default()).map(|w| &mut w.value)
    }

    /// The sum of one counter over the windows that count at `time_ms`,
    /// after moving to the current window (Sentinel's `ArrayMetric` sums).
    pub fn sum(&mut self, time_ms: i64, counter: impl Fn(&MetricBucket) -> u64) -> u64 {
        self.current_bucket(time_ms);
        self.values(time_ms).fold(0u64, |sum, b| sum.saturating_add(counter(b)))
    }
}

/// Sentinel's `OccupiableBucketLeapArray`: the statistics of the last
/// interval plus a future array of the passes that prioritized requests
/// booked into windows not begun yet; a window, when it begins, starts with
/// the passes booked into it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OccupiableBucketLeapArray {
    data: LeapArray<MetricBucket>,
    borrow: LeapArray<u64>,
}

impl OccupiableBucketLeapArray {
    /// Both arrays with `sample_count` buckets over `interval_ms`.
    pub fn new(sample_count: u32, interval_ms: u32) -> Result<Self, Error> {
        Ok(OccupiableBucketLeapArray {
            data: LeapArray::new(sample_count, interval_ms)?,
            borrow: LeapArray::future(sample_count, interval_ms)?,
        })
    }

    /// The statistics array.
    pub fn data(&self) -> &LeapArray<MetricBucket> {
        &self.data
    }

    /// The window of `time_ms`; a window that begins takes the passes
    /// booked into it.
    pub fn current_window(&mut self, time_ms: i64) -> Option<&mut Window<MetricBucket>> {
        let borrow = &self.borrow;
        self.data.current_window(time_ms, |start| MetricBucket {
            pass: borrow.window_value(start).copied().unwrap_or(0),
            ..MetricBucket::default()
        })
    }

    /// [`current_window`](Self::current_window)'s bucket.
    pub fn current_bucket(&mut self, time_ms: i64) -> Option<&mut MetricBucket> {
        self.current_window(time_ms).map(|w| &mut w.value)
    }

    /// The sum of one counter over the windows that count at `time_ms`.
    pub fn sum(&mut self, time_ms: i64, counter: impl Fn(&MetricBucket) -> u64) -> u64 {
        self.current_window(time_ms);
        self.data.values(time_ms).fold(0u64, |sum, b| sum.saturating_add(counter(b)))
    }

    /// The passes booked into windows after `now_ms` (Sentinel's
    /// `currentWaiting`).
    pub fn current_waiting(&mut self, now_ms: i64) -> u64 {
        self.borrow.current_window(now_ms, |_| 0);
        self.borrow.values(now_ms).fold(0u64, |sum, &pass| sum.saturating_add(pass))
    }

    /// Books `acquire_count` passes into the window of `time_ms` (Sentinel's
    /// `addWaiting`).
    pub fn add_waiting(&mut self, time_ms: i64, acquire_count: u64) {
        if let Some(window) = self.borrow.current_window(time_ms, |_| 0) {
            window.value = window.value.saturating_add(acquire_count);
        }
    }

    /// The windows after `now_ms` with the passes booked into them.
    pub fn booked(&self, now_ms: i64) -> impl Iterator<Item = (i64, u64)> + '_ {
        self.borrow.list(now_ms).map(|w| (w.start_ms, w.value))
    }

    /// The passes of the window holding `time_ms`, 0 when it is not kept
    /// (Sentinel's `ArrayMetric.getWindowPass`).
    pub fn window_pass(&self, time_ms: i64) -> u64 {
        self.data.window_value(time_ms).map_or(0, |b| b.pass)
    }
}
