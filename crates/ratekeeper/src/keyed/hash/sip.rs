//! [`RandomSipHash`]: SipHash-1-3 with a random key per limiter, the
//! function std's `RandomState` uses, written so that hashing one integer
//! key is a few register operations. The default hasher,
//! [`RandomAesHash`](super::RandomAesHash), uses it for keys longer than
//! 15 bytes and on CPUs without AES instructions.
//!
//! Why our own: a keyed decision hashes its key before it can prefetch the
//! key's slot, so the hash is paid in full, in series with the miss that
//! follows. std's `DefaultHasher` takes every integer through its general
//! byte-buffering path (a `u64` is written as 8 bytes: a loop over a tail
//! buffer, on the stack, behind two calls), a cost that shows even at a
//! thousand keys, where the table fits the caches (BENCHMARKS.md, the
//! `keyed` benchmark's *Earlier measurements*). Here a word written at a
//! word boundary — every integer key, and most of any key made of
//! integers — is one compression step on four registers; bytes go through
//! the same buffering as std's. The function is the same (Aumasson and
//! Bernstein's SipHash, one compression and three finalization rounds, a
//! 128-bit secret key), and so is its purpose: keys often come from the
//! people being limited, and a secret-keyed hash keeps them from choosing
//! keys that collide.
//!
//! The tests compare [`Sip<2, 4>`] — the same code with SipHash-2-4's
//! rounds — with the reference vector of the SipHash paper and with std's
//! own `SipHasher` (SipHash-2-4) on random writes.

use std::hash::{BuildHasher, Hasher, RandomState};

/// A [`BuildHasher`] of SipHash-1-3 with a random 128-bit key, drawn when
/// it is made (each limiter has its own).
#[derive(Clone)]
pub struct RandomSipHash {
    k0: u64,
    k1: u64,
}

impl RandomSipHash {
    /// A new random key. It is taken from std's `RandomState`: the hashes
    /// of two constants under a key the operating system's generator chose,
    /// which an observer can no more predict than that key.
    pub fn new() -> Self {
        let seed = RandomState::new();
        RandomSipHash { k0: seed.hash_one(0x5eed_u64), k1: seed.hash_one(0x5eed_u64 + 1) }
    }
}

impl Default for RandomSipHash {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RandomSipHash {
    /// The key stays secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("RandomSipHash { .. }")
    }
}

impl BuildHasher for RandomSipHash {
    type Hasher = SipHasher13;

    #[inline]
    fn build_hasher(&self) -> SipHasher13 {
        Sip::new_with_keys(self.k0, self.k1)
    }
}

/// SipHash-1-3: what [`RandomSipHash`] builds.
pub type SipHasher13 = Sip<1, 3>;

/// SipHash-`C`-`D`: `C` rounds per message word, `D` to finish.
#[derive(Debug, Clone)]
pub struct Sip<const C: usize, const D: usize> {
    v: [u64; 4],
    /// Bytes written but not yet compressed (fewer than 8), little-endian
    /// in the low bytes.
    tail: u64,
    tail_len: usize,
    /// Bytes written in all (only its low byte is used, as SipHash says).
    len: usize,
}

impl<const C: usize, const D: usize> Sip<C, D> {
    /// A hasher with the 128-bit key `(k0, k1)`.
    #[inline]
    pub fn new_with_keys(k0: u64, k1: u64) -> Self {
        Sip {
            v: [
                k0 ^ 0x736f_6d65_7073_6575,
                k1 ^ 0x646f_7261_6e64_6f6d,
                k0 ^ 0x6c79_6765_6e65_7261,
                k1 ^ 0x7465_6462_7974_6573,
            ],
            tail: 0,
            tail_len: 0,
            len: 0,
        }
    }

    /// One SipRound.
    #[inline(always)]
    fn round(&mut self) {
        let [mut v0, mut v1, mut v2, mut v3] = self.v;
        v0 = v0.wrapping_add(v1);
        v1 = v1.rotate_left(13) ^ v0;
        v0 = v0.rotate_left(32);
        v2 = v2.wrapping_add(v3);
        v3 = v3.rotate_left(16) ^ v2;
        v0 = v0.wrapping_add(v3);
        v3 = v3.rotate_left(21) ^ v0;
        v2 = v2.wrapping_add(v1);
        v1 = v1.rotate_left(17) ^ v2;
        v2 = v2.rotate_left(32);
        self.v = [v0, v1, v2, v3];
    }

    /// Takes in one 8-byte message word.
    #[inline(always)]
    fn compress(&mut self, m: u64) {
        self.v[3] ^= m;
        for _ in 0..C {
            self.round();
        }
        self.v[0] ^= m;
    }
}

/// `bytes` (fewer than 8) as a little-endian integer, in at most three
/// loads rather than one per byte, as std's SipHash reads a message's
/// tail: a short key (an IPv4 address's 4 bytes) is all tail.
#[inline(always)]
fn le_partial(bytes: &[u8]) -> u64 {
    debug_assert!(bytes.len() < 8);
    let (mut word, mut at) = (0, 0);
    if let Some(four) = bytes.first_chunk::<4>() {
        word = u64::from(u32::from_le_bytes(*four));
        at = 4;
    }
    if let Some(two) = bytes[at..].first_chunk::<2>() {
        word |= u64::from(u16::from_le_bytes(*two)) << (8 * at);
        at += 2;
    }
    if let Some(&one) = bytes.get(at) {
        word |= u64::from(one) << (8 * at);
    }
    word
}

impl<const C: usize, const D: usize> Hasher for Sip<C, D> {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        self.len = self.len.wrapping_add(bytes.len());
        let mut rest = bytes;
        // Top up the tail first.
        if self.tail_len > 0 {
            let take = (8 - self.tail_len).min(rest.len());
            for (i, &b) in rest[..take].iter().enumerate() {
                self.tail |= u64::from(b) << (8 * (self.tail_len + i));
            }
            self.tail_len += take;
            rest = &rest[take..];
            if self.tail_len < 8 {
                return;
            }
            let word = self.tail;
            self.compress(word);
            self.tail = 0;
            self.tail_len = 0;
        }
        let mut words = rest.chunks_exact(8);
        for word in &mut words {
            let word = u64::from_le_bytes(word.try_into().expect("chunks of 8"));
            self.compress(word);
        }
        // The tail is empty here (topped up and taken in above, or never
        // begun).
        self.tail = le_partial(words.remainder());
        self.tail_len = words.remainder().len();
    }

    /// The 8 bytes of `word`, little-endian: at a word boundary, one
    /// compression with no buffering.
    #[inline]
    fn write_u64(&mut self, word: u64) {
        if self.tail_len == 0 {
            self.len = self.len.wrapping_add(8);
            self.compress(word);
        } else {
            self.write(&word.to_le_bytes());
        }
    }

    #[inline]
    fn write_usize(&mut self, word: usize) {
        self.write_u64(word as u64);
    }

    #[inline]
    fn write_i64(&mut self, word: i64) {
        self.write_u64(word as u64);
    }

    #[inline]
    fn write_u128(&mut self, word: u128) {
        self.write_u64(word as u64);
        self.write_u64((word >> 64) as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        let mut last = self.clone();
        let b = ((self.len as u64 & 0xff) << 56) | self.tail;
        last.compress(b);
        last.v[2] ^= 0xff;
        for _ in 0..D {
            last.round();
        }
        let [v0, v1, v2, v3] = last.v;
        v0 ^ v1 ^ v2 ^ v3
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The SipHash paper's test vector (appendix A): SipHash-2-4 of the 15
    /// bytes 00..0e under the key 00..0f.
    #[test]
    fn the_papers_vector() {
        let k0 = u64::from_le_bytes([0, 1, 2, 3, 4, 5, 6, 7]);
        let k1 = u64::from_le_bytes([8, 9, 10, 11, 12, 13, 14, 15]);
        let mut h = Sip::<2, 4>::new_with_keys(k0, k1);
        h.write(&(0u8..15).collect::<Vec<_>>());
        assert_eq!(h.finish(), 0xa129_ca61_49be_45e5);
    }

    /// One write of the message.
    #[derive(Debug)]
    enum Write {
        Bytes(Vec<u8>),
        Word(u64),
    }

    fn writes() -> impl Strategy<Value = Vec<Write>> {
        let write = prop_oneof![
            proptest::collection::vec(any::<u8>(), 0..20).prop_map(Write::Bytes),
            any::<u64>().prop_map(Write::Word)
        ];
        proptest::collection::vec(write, 0..8)
    }

    proptest! {
        /// Whatever the writes, SipHash-2-4 here is std's SipHash-2-4 of
        /// the same bytes (a word as its 8 little-endian bytes).
        #[test]
        fn agrees_with_std(k0: u64, k1: u64, writes in writes()) {
            let mut ours = Sip::<2, 4>::new_with_keys(k0, k1);
            #[allow(deprecated)]
            let mut std = std::hash::SipHasher::new_with_keys(k0, k1);
            for w in &writes {
                match w {
                    Write::Bytes(bytes) => ours.write(bytes),
                    Write::Word(word) => ours.write_u64(*word),
                }
                match w {
                    Write::Bytes(bytes) => std.write(bytes),
                    Write::Word(word) => std.write(&word.to_le_bytes()),
                }
            }
            prop_assert_eq!(ours.finish(), std.finish());
        }

        /// SipHash-1-3 takes the same bytes however they were split up.
        #[test]
        fn splits_do_not_matter(k0: u64, k1: u64, bytes in proptest::collection::vec(any::<u8>(), 0..64), cut in 0usize..64) {
            let mut whole = SipHasher13::new_with_keys(k0, k1);
            whole.write(&bytes);
            let cut = cut.min(bytes.len());
            let mut split = SipHasher13::new_with_keys(k0, k1);
            split.write(&bytes[..cut]);
            split.write(&bytes[cut..]);
            prop_assert_eq!(whole.finish(), split.finish());
        }
    }

    #[test]
    fn each_limiter_has_its_own_key() {
        let (a, b) = (RandomSipHash::new(), RandomSipHash::new());
        assert_ne!(a.hash_one(42u64), b.hash_one(42u64));
        assert_eq!(a.hash_one(42u64), a.hash_one(42u64));
        assert_eq!(format!("{a:?}"), "RandomSipHash { .. }");
    }
}
