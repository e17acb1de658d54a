//! [`Color`]: the mark a three-colour marker gives a packet.

/// A packet's colour, as RFC 2697 and RFC 2698 mark it: green conforms,
/// yellow exceeds the committed rate or burst but not the other limit, red
/// exceeds both. A colour-aware marker also takes the colour a packet
/// already carries (from an earlier marker) and never improves it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Color {
    /// Conforming.
    Green,
    /// Exceeding the committed limit only.
    Yellow,
    /// Exceeding every limit.
    Red,
}

impl Color {
    /// `"green"`, `"yellow"` or `"red"`.
    pub const fn name(self) -> &'static str {
        match self {
            Color::Green => "green",
            Color::Yellow => "yellow",
            Color::Red => "red",
        }
    }

    /// The colour named `"green"`, `"yellow"` or `"red"`.
    pub fn from_name(name: &str) -> Option<Color> {
        match name {
            "green" => Some(Color::Green),
            "yellow" => Some(Color::Yellow),
            "red" => Some(Color::Red),
            _ => None,
        }
    }
}

/// How many token-update events a rate of `per_second` has produced by
/// `micros` (≥ 0) after creation: the RFCs increment a bucket "CIR times per
/// second", one token at a time; the k-th increment is at `k / rate`
/// seconds. Exact: `⌊micros × rate / 10⁶⌋` in 128 bits.
#[inline]
pub(crate) fn events(micros: i64, per_second: u64) -> u128 {
    (u128::from(micros.max(0) as u64) * u128::from(per_second)) / 1_000_000
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for c in [Color::Green, Color::Yellow, Color::Red] {
            assert_eq!(Color::from_name(c.name()), Some(c));
        }
        assert_eq!(Color::from_name("blue"), None);
        assert!(Color::Green < Color::Yellow && Color::Yellow < Color::Red);
    }

    #[test]
    fn events_fall_on_the_rate_grid() {
        assert_eq!(events(999_999, 1), 0);
        assert_eq!(events(1_000_000, 1), 1);
        assert_eq!(events(333_333, 3), 0);
        assert_eq!(events(333_334, 3), 1);
        assert_eq!(events(-5, 3), 0);
        assert_eq!(events(i64::MAX, u64::MAX), (u128::from(i64::MAX as u64) * u128::from(u64::MAX)) / 1_000_000);
    }
}
