//! The sliding log: exactly `limit` units in any window of `window_micros`.
//!
//! The log remembers when every admitted unit was admitted; a request at
//! time `t` is admitted if the units logged in `(t − window, t]`, plus its
//! cost, stay within `limit`. It is the only exact window algorithm — no
//! interval of length `window` ever holds more than `limit` units — and it
//! pays for that in memory.
//!
//! **Memory: bounded by the limit, sized by use.** Units admitted at the
//! same microsecond share one [`LogEntry`], and every entry holds at least
//! one unit that still counts, so the log never needs more than `limit`
//! entries (16 bytes each). The core allocates nothing: it keeps its
//! entries in a ring over storage the caller provides ([`LogStorage`]).
//! Fixed storage (`[LogEntry; N]`, a `&mut [LogEntry]`) must hold `limit`
//! entries from the start; storage that can resize (the std layer's, on
//! the heap) starts empty, is doubled when the ring is full, and cut to
//! twice what it holds when three quarters of it are unused, so a log
//! holds room for about as many entries as it has recently needed: a limit of a million costs
//! nothing until a million units come. A decision costs O(1) amortized (old
//! entries are dropped as they slide out, and every resize is paid for by
//! the entries added or dropped since the last), and a refusal's
//! retry-after walks the entries.
//!
//! A time earlier than the latest seen counts as the latest, so the log
//! stays sorted and time going backwards never frees a unit.
//!
//! The limit may change at run time ([`SlidingLog::set_limit`]), keeping
//! the log: every admission leaves the window ending with it within the
//! limit of that moment, so no window holds more than the largest limit in
//! force during it.

use crate::admission::Admission;
use crate::decision::{Decision, NEVER};
use crate::error::{Argument, Error};
use crate::fixed_window::{check_limit, check_limit_and_window};
use crate::full::{later_than, Full};

/// Units admitted at one microsecond.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogEntry {
    /// When they were admitted (microseconds since creation).
    pub at_micros: i64,
    /// How many units (at least 1 in a live entry).
    pub units: u64,
}

/// Where a [`SlidingLog`] keeps its entries: slots the log uses as a ring,
/// which the storage may be able to resize.
pub trait LogStorage {
    /// The slots.
    fn slots(&self) -> &[LogEntry];

    /// The slots, to write.
    fn slots_mut(&mut self) -> &mut [LogEntry];

    /// Resizes to `len` slots, keeping the first `min(len, old)` as they
    /// are, and says whether it did. Fixed storage cannot (the default).
    fn resize(&mut self, len: usize) -> bool {
        let _ = len;
        false
    }

    /// Whether [`resize`](Self::resize) can grow this storage up to any
    /// limit; if not, it must hold `limit` slots from the start.
    fn resizes(&self) -> bool {
        false
    }
}

/// Fixed storage: an array, a `&mut [LogEntry]`, a boxed slice or a `Vec`
/// of at least `limit` entries, never resized.
impl<T: AsRef<[LogEntry]> + AsMut<[LogEntry]>> LogStorage for T {
    fn slots(&self) -> &[LogEntry] {
        self.as_ref()
    }

    fn slots_mut(&mut self) -> &mut [LogEntry] {
        self.as_mut()
    }
}

/// The largest limit `storage` can log, and the argument that names that
/// bound: any (up to `i64::MAX`) for storage that resizes, its slots for
/// fixed storage.
fn limit_room(storage: &impl LogStorage) -> (u64, Argument) {
    if storage.resizes() {
        (i64::MAX as u64, Argument::Limit)
    } else {
        (storage.slots().len() as u64, Argument::SlidingLogStorageLimit)
    }
}

/// A storage that resizes never holds fewer slots than this once it holds
/// any: resizing a tiny ring on every few decisions would cost more than
/// the bytes it saves.
const MIN_SLOTS: usize = 4;

/// A sliding log of at most `limit` units per `window_micros`, over
/// [`LogStorage`] `S`.
#[derive(Debug, Clone)]
pub struct SlidingLog<S> {
    entries: S,
    /// The oldest live entry's slot.
    head: usize,
    /// How many entries are live.
    len: usize,
    /// The units in the live entries.
    total: u64,
    /// The latest time seen.
    latest: i64,
    limit: u64,
    window_micros: i64,
}

impl<S: LogStorage> SlidingLog<S> {
    /// At most `limit` units in any window of `window_micros`, logged in
    /// `storage`, which must hold at least `limit` entries unless it
    /// [resizes](LogStorage::resizes) (its contents are ignored).
    ///
    /// Errors when `limit` is 0 or exceeds fixed storage's length, or
    /// `window_micros` is not positive.
    pub fn new(limit: u64, window_micros: i64, storage: S) -> Result<Self, Error> {
        let (room, argument) = limit_room(&storage);
        check_limit_and_window(limit, room, argument, window_micros)?;
        Ok(SlidingLog { entries: storage, head: 0, len: 0, total: 0, latest: i64::MIN, limit, window_micros })
    }

    /// Changes the limit at `now_micros`, keeping the log, as Go's
    /// `SetLimitAt` and Guava's `setRate` keep what was taken: every unit
    /// logged in the last window still counts, so a lower limit refuses
    /// until enough of them have slid out to bring the count under it, and
    /// a higher one admits the difference at once. The units that slid out
    /// by `now_micros` are dropped first, as a decision there would.
    ///
    /// The log stays within the new limit's memory: a unit is admitted
    /// only when the count plus its cost fits the limit, so the entries
    /// never outnumber it when one is added, however many a lower limit
    /// finds logged.
    ///
    /// Errors, changing nothing, on the bounds of [`new`](Self::new) (for
    /// fixed storage: more than it holds).
    pub fn set_limit(&mut self, limit: u64, now_micros: i64) -> Result<(), Error> {
        let (room, argument) = limit_room(&self.entries);
        check_limit(limit, room, argument)?;
        self.advance(now_micros);
        self.limit = limit;
        Ok(())
    }

    /// How many entries the storage has room for now.
    pub fn capacity(&self) -> usize {
        self.entries.slots().len()
    }

    /// The storage (its slots, as a ring, are the log's business).
    pub fn storage(&self) -> &S {
        &self.entries
    }

    /// Units per window.
    #[inline]
    pub fn limit(&self) -> u64 {
        self.limit
    }

    /// The window's length in microseconds.
    pub fn window_micros(&self) -> i64 {
        self.window_micros
    }

    /// The live entries, oldest first (some may have slid out since the
    /// last decision).
    pub fn entries(&self) -> impl Iterator<Item = LogEntry> + '_ {
        let slots = self.entries.slots();
        (0..self.len).map(move |i| slots[(self.head + i) % slots.len()])
    }

    /// The newest live entry, if any.
    #[inline]
    fn newest(&self) -> Option<LogEntry> {
        let slots = self.entries.slots();
        (self.len > 0).then(|| slots[(self.head + self.len - 1) % slots.len()])
    }

    /// Whether an entry at `at` still counts at time `t`: it is in
    /// `(t − window, t]`.
    #[inline]
    fn counts_at(&self, at: i64, t: i64) -> bool {
        i128::from(at) > i128::from(t) - i128::from(self.window_micros)
    }

    /// How many of the oldest entries have slid out at `t`, and their units.
    #[inline]
    fn expired(&self, t: i64) -> (usize, u64) {
        let mut units = 0;
        for (i, entry) in self.entries().enumerate() {
            if self.counts_at(entry.at_micros, t) {
                return (i, units);
            }
            units += entry.units;
        }
        (self.len, units)
    }

    /// When the entry at `at` stops counting, from `t`.
    #[inline]
    fn until_out(&self, at: i64, t: i64) -> i64 {
        let out = i128::from(at) + i128::from(self.window_micros) - i128::from(t);
        i64::try_from(out.max(0)).unwrap_or(NEVER)
    }

    /// The decision at `t` (already clamped) with `skip` expired entries
    /// holding `expired_units`.
    fn decide(&self, cost: u64, t: i64, skip: usize, expired_units: u64) -> Decision {
        let total = self.total - expired_units;
        let after = total.saturating_add(cost);
        let newest = self.entries().skip(skip).last();
        // A cost of 0 is a free look, admitted even over a limit lowered
        // below the count (`set_limit`).
        if cost == 0 || after <= self.limit {
            let reset_after = if after == 0 {
                0
            } else if cost > 0 {
                self.window_micros
            } else {
                newest.map_or(0, |e| self.until_out(e.at_micros, t))
            };
            return Decision::allowed(self.limit, self.limit.saturating_sub(after), reset_after, self.window_micros);
        }
        let retry_after = if cost > self.limit {
            NEVER
        } else {
            // Wait until enough of the oldest units slide out.
            let mut excess = after - self.limit;
            let mut retry = NEVER;
            for entry in self.entries().skip(skip) {
                if entry.units >= excess {
                    retry = self.until_out(entry.at_micros, t);
                    break;
                }
                excess -= entry.units;
            }
            retry
        };
        let reset_after = newest.map_or(0, |e| self.until_out(e.at_micros, t));
        // Saturating: a lower limit (`set_limit`) may find more logged.
        Decision::refused(self.limit, self.limit.saturating_sub(total), retry_after, reset_after, self.window_micros)
    }

    /// Room for one more entry: the ring doubled (at least [`MIN_SLOTS`],
    /// at most `limit`), its wrapped-around tail moved to the new end so the live
    /// entries stay in order. Only called on a full ring, which fixed
    /// storage never is when an entry is added.
    #[cold]
    fn grow(&mut self) {
        let old = self.capacity();
        let limit = usize::try_from(self.limit).unwrap_or(usize::MAX);
        let new = old.saturating_mul(2).max(MIN_SLOTS).min(limit);
        if new <= old || !self.entries.resize(new) {
            return;
        }
        if self.len > 0 && self.head > 0 {
            // The live entries are [head, old) then [0, head): put the first
            // part at the end of the larger ring.
            let moved = old - self.head;
            self.entries.slots_mut().copy_within(self.head..old, new - moved);
            self.head = new - moved;
        } else {
            self.head = 0;
        }
    }

    /// Moves the log to `now_micros` (never before the latest time seen,
    /// which it returns): the entries that slid out are dropped, so the log
    /// holds only live ones.
    fn advance(&mut self, now_micros: i64) -> i64 {
        let t = now_micros.max(self.latest);
        self.latest = t;
        let (skip, expired_units) = self.expired(t);
        if skip > 0 {
            self.head = (self.head + skip) % self.capacity();
            self.len -= skip;
            self.total -= expired_units;
            self.shrink_if_unused();
        }
        t
    }

    /// Shrinks a storage that is three quarters unused to twice what it
    /// holds (never below [`MIN_SLOTS`], to nothing when empty): the live
    /// entries moved to the front first, so the slots kept hold them.
    fn shrink_if_unused(&mut self) {
        let capacity = self.capacity();
        if self.len * 4 > capacity || capacity <= MIN_SLOTS || !self.entries.resizes() {
            return;
        }
        let new = if self.len == 0 { 0 } else { (2 * self.len).max(MIN_SLOTS) };
        let slots = self.entries.slots_mut();
        if self.head + self.len <= capacity {
            slots.copy_within(self.head..self.head + self.len, 0);
        } else {
            slots.rotate_left(self.head);
        }
        self.head = 0;
        self.entries.resize(new);
    }
}

impl<S: LogStorage> Admission for SlidingLog<S> {
    #[inline]
    fn check(&mut self, cost: u64, now_micros: i64) -> Decision {
        let t = self.advance(now_micros);
        let decision = self.decide(cost, t, 0, 0);
        if decision.allowed && cost > 0 {
            self.total += cost;
            let capacity = self.capacity();
            let newest = (self.head + self.len + capacity.max(1) - 1) % capacity.max(1);
            if self.len > 0 && self.entries.slots()[newest].at_micros == t {
                self.entries.slots_mut()[newest].units += cost;
            } else {
                if self.len == capacity {
                    self.grow();
                }
                // Room is there: every live entry holds at least one of the
                // at most `limit` live units, and the storage holds `limit`
                // slots (fixed) or just grew towards them.
                let capacity = self.capacity();
                self.entries.slots_mut()[(self.head + self.len) % capacity] = LogEntry { at_micros: t, units: cost };
                self.len += 1;
            }
        }
        decision
    }

    #[inline]
    fn peek(&self, cost: u64, now_micros: i64) -> Decision {
        let t = now_micros.max(self.latest);
        let (skip, expired_units) = self.expired(t);
        self.decide(cost, t, skip, expired_units)
    }

    /// Drops the newest `cost` logged units still in the window (a check
    /// logs its units as the newest, so a check and a refund at the same
    /// time cancel out): the units that slid out are gone already, and a
    /// refund of more than the log holds empties it.
    fn refund(&mut self, cost: u64, now_micros: i64) {
        if cost == 0 {
            return;
        }
        self.advance(now_micros);
        let mut left = cost;
        while left > 0 && self.len > 0 {
            let capacity = self.capacity();
            let newest = (self.head + self.len - 1) % capacity;
            let entry = &mut self.entries.slots_mut()[newest];
            let taken = entry.units.min(left);
            entry.units -= taken;
            left -= taken;
            self.total -= taken;
            if entry.units == 0 {
                self.len -= 1;
            }
        }
        if self.len == 0 {
            self.head = 0;
        }
        self.shrink_if_unused();
    }
}

/// Full when every logged unit has slid out by now (and the log has not seen
/// a later time): a fresh log is empty, and a decision drops what slid out
/// before reading anything. Where the entries sit in the ring differs, which
/// no decision can see.
impl<S: LogStorage + Clone> Full for SlidingLog<S> {
    fn fresh(&self) -> Self {
        let mut entries = self.entries.clone();
        if entries.resizes() {
            entries.resize(0);
        }
        SlidingLog { entries, head: 0, len: 0, total: 0, latest: i64::MIN, ..*self }
    }

    #[inline]
    fn is_full_at(&self, now_micros: i64) -> bool {
        now_micros >= 0
            && self.latest <= now_micros
            && self.newest().is_none_or(|e| !self.counts_at(e.at_micros, now_micros))
    }

    fn full_at_micros(&self, now_micros: i64) -> i64 {
        if self.is_full_at(now_micros) {
            return now_micros;
        }
        let out = self.newest().map_or(0, |e| e.at_micros.saturating_add(self.window_micros));
        later_than(now_micros, out.max(self.latest).max(0))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn log(limit: u64, window: i64) -> SlidingLog<[LogEntry; 8]> {
        SlidingLog::new(limit, window, [LogEntry::default(); 8]).unwrap()
    }

    #[test]
    fn exact_window() {
        let mut l = log(3, 1_000);
        assert!(l.check(1, 100).allowed);
        assert!(l.check(2, 600).allowed);
        let refused = l.check(1, 1_099);
        assert_eq!((refused.allowed, refused.remaining), (false, 0));
        // The unit at 100 stops counting at 1,100; the two at 600 at 1,600.
        assert_eq!(refused.retry_after_micros, 1);
        assert_eq!(refused.reset_after_micros, 501);
        let d = l.check(1, 1_100);
        assert_eq!((d.allowed, d.remaining, d.reset_after_micros), (true, 0, 1_000));
        assert_eq!(l.check(2, 1_100).retry_after_micros, 500);
        assert_eq!(l.check(4, 1_100).retry_after_micros, NEVER);
        assert_eq!(l.entries().count(), 2);
    }

    #[test]
    fn same_time_units_share_an_entry_so_memory_stays_bounded() {
        let mut l = SlidingLog::new(4, 10, [LogEntry::default(); 4]).unwrap();
        for now in 0..1_000 {
            for _ in 0..5 {
                l.check(1, now);
            }
            assert!(l.entries().count() <= 4);
        }
        assert_eq!(l.peek(0, 999).remaining, 0);
    }

    #[test]
    fn storage_must_hold_the_limit() {
        assert_eq!(
            SlidingLog::new(9, 10, [LogEntry::default(); 8]).unwrap_err(),
            Error::invalid_int(Argument::SlidingLogStorageLimit, 9)
        );
        assert!(SlidingLog::new(0, 10, [LogEntry::default(); 8]).is_err());
        assert!(SlidingLog::new(1, 0, [LogEntry::default(); 8]).is_err());
        let mut storage = [LogEntry::default(); 2];
        let mut borrowed = SlidingLog::new(2, 10, &mut storage[..]).unwrap();
        assert!(borrowed.check(2, 0).allowed);
    }

    #[test]
    fn set_limit_keeps_the_log() {
        let mut l = log(6, 1_000);
        assert!(l.check(2, 100).allowed);
        assert!(l.check(3, 400).allowed);
        // Lower than the 5 logged: the 2 at 100 slide out at 1,100, which
        // leaves 3, still over 2 with one more; the 3 at 400 at 1,400.
        l.set_limit(2, 500).unwrap();
        let refused = l.check(1, 600);
        assert_eq!((refused.allowed, refused.limit, refused.remaining), (false, 2, 0));
        assert_eq!(refused.retry_after_micros, 800);
        let look = l.check(0, 600);
        assert_eq!((look.allowed, look.remaining), (true, 0), "a cost of 0 is a free look");
        assert!(!l.check(1, 1_399).allowed);
        assert!(l.check(2, 1_400).allowed);
        // Higher (up to the storage's 8): the difference at once.
        l.set_limit(8, 1_400).unwrap();
        let d = l.check(6, 1_500);
        assert_eq!((d.allowed, d.limit, d.remaining), (true, 8, 0));
        assert_eq!(l.limit(), 8);
    }

    #[test]
    fn set_limit_errors_change_nothing() {
        let mut l = log(3, 1_000);
        l.check(2, 10);
        let before: ([LogEntry; 8], u64) = (*l.storage(), l.peek(0, 10).remaining);
        assert_eq!(l.set_limit(0, 20), Err(Error::invalid_int(Argument::SlidingLogStorageLimit, 0)));
        assert_eq!(l.set_limit(9, 20), Err(Error::invalid_int(Argument::SlidingLogStorageLimit, 9)));
        assert_eq!((*l.storage(), l.peek(0, 10).remaining), before);
        assert_eq!(l.limit(), 3);
    }

    #[test]
    fn time_going_backwards_frees_nothing() {
        let mut l = log(1, 1_000);
        assert!(l.check(1, 5_000).allowed);
        assert!(!l.check(1, 4_000).allowed);
        assert!(!l.check(1, i64::MIN).allowed);
        assert!(l.check(1, 6_000).allowed);
    }

    #[test]
    fn peek_agrees_with_check() {
        let mut l = log(5, 100);
        for (now, cost) in [(0, 2), (50, 2), (120, 3), (149, 1), (151, 2), (400, 5), (401, 0)] {
            let peeked = l.peek(cost, now);
            assert_eq!(peeked, l.check(cost, now), "at {now}");
        }
    }

    #[test]
    fn extreme_inputs_never_panic() {
        let mut l = SlidingLog::new(8, i64::MAX, [LogEntry::default(); 8]).unwrap();
        for now in [i64::MIN, -1, 0, 1, i64::MAX, i64::MIN] {
            for cost in [0, 1, u64::MAX] {
                let _ = (l.check(cost, now), l.peek(cost, now));
            }
        }
    }
}
