//! [`RandomAesHash`]: the keyed limiters' default hasher — AES-128 under a
//! secret key for keys of up to 15 bytes (every integer key, most short
//! ids), SipHash-1-3 beyond, and SipHash-1-3 for every key on a CPU
//! without AES instructions.
//!
//! Why not SipHash alone ([`RandomSipHash`](super::RandomSipHash)): in a
//! table larger than the caches a keyed decision costs one miss, and what
//! decides its time is how much of the *next* decision's miss the CPU can
//! start before this one's returns. That depends on how many instructions
//! lie between one decision's miss and the next one's prefetch, and the
//! hash of the next key is most of them: SipHash-1-3 of a `u64` is five
//! SipRounds, some 80 instructions. AES-128 of one block is ten AES round
//! instructions, so more of the next miss overlaps this one. What that is
//! worth is in BENCHMARKS.md: the `keyed` benchmark
//! (`benches/rust/benches/keyed.rs`) runs a GCRA limiter under each hasher
//! side by side, and its *Earlier measurements* give the raw loop of a
//! keyed decision's shape, and the ranges over many runs, that led here.
//!
//! Why AES-128 and not a faster mixing function (foldhash, FxHash, a
//! multiply): keys often come from the people being limited, and a keyed
//! hash they cannot predict keeps them from choosing keys that collide
//! (which would make a shard's probes long). AES-128 under a random key is
//! a pseudorandom permutation — the standard block cipher, all ten rounds,
//! not a reduced-round mix — so the hash of a short key is as unpredictable
//! as SipHash's, and two distinct short keys never share a 128-bit block.
//!
//! The construction:
//!
//! * A key's bytes are a stream (the `Hash` writes, integers as their
//!   little-endian bytes). A stream of at most 15 bytes is packed into one
//!   block — the bytes, zeros, and the length in the last byte, so distinct
//!   streams make distinct blocks — XORed with the limiter's own random
//!   128-bit tweak, and encrypted; the hash is the low 64 bits of the
//!   ciphertext.
//! * A longer stream is hashed with SipHash-1-3 under the limiter's own
//!   random 128-bit key; so is every stream when the CPU has no AES
//!   instructions (then this is exactly [`RandomSipHash`](super::RandomSipHash)).
//! * The AES key is drawn once per process (its 11 round keys, 176 bytes,
//!   live in a `static`: a `Hasher` cannot borrow from the `BuildHasher`
//!   that made it, and copying them into every hasher cost more than the
//!   rounds). Each limiter's tweak makes its function its own: the same key
//!   hashes differently in two limiters.
//!
//! AES-NI is detected at run time (x86-64); other architectures use
//! SipHash-1-3 throughout. The tests check the cipher against FIPS-197's
//! example vector and the fallback against the SipHash in `sip`.

use std::hash::{BuildHasher, Hasher, RandomState};
use std::sync::OnceLock;

use super::sip::SipHasher13;

/// The longest byte stream hashed as one AES block (the 16th byte holds
/// the length).
const SHORT_MAX: usize = 15;

/// A [`BuildHasher`] of AES-128 for short keys and SipHash-1-3 for long
/// ones, under secret random keys (see the module docs).
#[derive(Clone)]
pub struct RandomAesHash {
    aes: Option<&'static AesKey>,
    tweak: u128,
    sip_k0: u64,
    sip_k1: u64,
}

impl RandomAesHash {
    /// A new limiter's hasher: the process's AES key (drawn on first use),
    /// a random tweak and a random SipHash key of its own. They are taken
    /// from std's `RandomState`: hashes of constants under a key the
    /// operating system's generator chose.
    pub fn new() -> Self {
        Self::with_aes(AesKey::for_process())
    }

    fn with_aes(aes: Option<&'static AesKey>) -> Self {
        let seed = RandomState::new();
        let word = |i: u64| seed.hash_one(0xae5_u64 + i);
        RandomAesHash { aes, tweak: u128::from(word(0)) | u128::from(word(1)) << 64, sip_k0: word(2), sip_k1: word(3) }
    }

    /// Whether short keys are hashed with AES (false: SipHash throughout).
    pub fn uses_aes(&self) -> bool {
        self.aes.is_some()
    }
}

impl Default for RandomAesHash {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for RandomAesHash {
    /// The keys stay secret.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RandomAesHash {{ uses_aes: {}, .. }}", self.uses_aes())
    }
}

impl BuildHasher for RandomAesHash {
    type Hasher = AesHasher;

    #[inline(always)]
    fn build_hasher(&self) -> AesHasher {
        AesHasher {
            aes: self.aes,
            tweak: self.tweak,
            sip_k0: self.sip_k0,
            sip_k1: self.sip_k1,
            short: 0,
            len: 0,
            long: SipHasher13::new_with_keys(self.sip_k0, self.sip_k1),
        }
    }
}

/// What [`RandomAesHash`] builds.
#[derive(Clone)]
pub struct AesHasher {
    aes: Option<&'static AesKey>,
    tweak: u128,
    /// SipHash's key, for a short stream without AES: as plain words, so
    /// that the out-of-line call for it takes no reference to `long`
    /// (which would keep `long` in memory on every path).
    sip_k0: u64,
    sip_k1: u64,
    /// The stream's bytes while there are at most [`SHORT_MAX`]: byte `i`
    /// in bits `8i..8i+8`, zeros above.
    short: u128,
    /// Bytes written in all.
    len: usize,
    /// Fed the stream once it is longer than [`SHORT_MAX`].
    long: SipHasher13,
}

impl std::fmt::Debug for AesHasher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("AesHasher { .. }")
    }
}

impl AesHasher {
    /// Writes the low `n` (at most 8) bytes of `word`, little-endian:
    /// while the stream is short, a shift and an OR.
    #[inline(always)]
    fn write_word(&mut self, word: u64, n: usize) {
        if self.len.saturating_add(n) <= SHORT_MAX {
            self.short |= u128::from(word) << (8 * self.len);
            self.len += n;
        } else {
            self.write(&word.to_le_bytes()[..n]);
        }
    }
}

impl Hasher for AesHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let len = self.len.saturating_add(bytes.len());
        if len <= SHORT_MAX {
            let mut buffer = self.short.to_le_bytes();
            buffer[self.len..len].copy_from_slice(bytes);
            self.short = u128::from_le_bytes(buffer);
        } else {
            if self.len == 8 {
                // The stream just became long after one word (a byte
                // string's length, for one): SipHash takes it as a word.
                self.long.write_u64(self.short as u64);
            } else if self.len <= SHORT_MAX {
                // The stream just became long: SipHash takes it from the start.
                self.long.write(&self.short.to_le_bytes()[..self.len]);
            }
            self.long.write(bytes);
        }
        self.len = len;
    }

    #[inline]
    fn write_u8(&mut self, word: u8) {
        self.write_word(word.into(), 1);
    }

    #[inline]
    fn write_u16(&mut self, word: u16) {
        self.write_word(word.into(), 2);
    }

    #[inline]
    fn write_u32(&mut self, word: u32) {
        self.write_word(word.into(), 4);
    }

    #[inline]
    fn write_u64(&mut self, word: u64) {
        self.write_word(word, 8);
    }

    #[inline]
    fn write_u128(&mut self, word: u128) {
        self.write_word(word as u64, 8);
        self.write_word((word >> 64) as u64, 8);
    }

    #[inline]
    fn write_usize(&mut self, word: usize) {
        self.write_word(word as u64, std::mem::size_of::<usize>());
    }

    #[inline]
    fn write_i64(&mut self, word: i64) {
        self.write_word(word as u64, 8);
    }

    /// Short and with AES: the block encrypted, all in registers. (Kept
    /// small enough to inline, without AES's absence inline: a call that
    /// took the hasher by reference made every hash store it to the stack
    /// first.)
    #[inline(always)]
    fn finish(&self) -> u64 {
        if self.len > SHORT_MAX {
            return self.long.finish();
        }
        match self.aes {
            Some(key) => key.encrypt_low64((self.short | (self.len as u128) << 120) ^ self.tweak),
            None => short_sip(self.sip_k0, self.sip_k1, self.short, self.len),
        }
    }
}

/// SipHash-1-3 of the short stream `short` (`len` bytes), without AES.
#[inline(never)]
fn short_sip(k0: u64, k1: u64, short: u128, len: usize) -> u64 {
    let mut sip = SipHasher13::new_with_keys(k0, k1);
    sip.write(&short.to_le_bytes()[..len]);
    sip.finish()
}

/// An expanded AES-128 key: proof that this CPU has AES instructions.
pub(crate) struct AesKey {
    #[cfg(target_arch = "x86_64")]
    round_keys: [std::arch::x86_64::__m128i; 11],
}

impl AesKey {
    /// The process's key, drawn and expanded on first use; `None` without
    /// AES instructions.
    fn for_process() -> Option<&'static AesKey> {
        static KEY: OnceLock<Option<AesKey>> = OnceLock::new();
        KEY.get_or_init(|| {
            let seed = RandomState::new();
            let word = |i: u64| seed.hash_one(0xae5_1de_u64 + i);
            AesKey::expand(u128::from(word(0)) | u128::from(word(1)) << 64)
        })
        .as_ref()
    }

    /// The key's round keys, if the CPU can use them.
    fn expand(key: u128) -> Option<AesKey> {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("aes") {
            // SAFETY: the CPU has AES instructions (SSE2 is part of x86-64).
            return Some(AesKey { round_keys: unsafe { x86::expand(key) } });
        }
        let _ = key;
        None
    }

    /// The low 64 bits of AES-128 of `block` (as 16 little-endian bytes).
    #[inline(always)]
    fn encrypt_low64(&self, block: u128) -> u64 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: an `AesKey` exists only where `expand` found AES
        // instructions.
        return unsafe { x86::encrypt(&self.round_keys, block) } as u64;
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("no AesKey without AES instructions: {block}")
    }

    /// AES-128 of `block` (for the tests' FIPS-197 vector).
    #[cfg(test)]
    fn encrypt(&self, block: u128) -> u128 {
        #[cfg(target_arch = "x86_64")]
        // SAFETY: as in `encrypt_low64`.
        return unsafe { x86::encrypt(&self.round_keys, block) };
        #[cfg(not(target_arch = "x86_64"))]
        unreachable!("no AesKey without AES instructions: {block}")
    }
}

/// AES-128 with AES-NI: the key schedule of FIPS-197 §5.2 and the cipher of
/// §5.1, one instruction per round.
#[cfg(target_arch = "x86_64")]
mod x86 {
    use std::arch::x86_64::*;

    /// One step of the key schedule: the next round key from `key`, with
    /// `AESKEYGENASSIST`'s RotWord(SubWord(w3)) ⊕ Rcon broadcast and
    /// XORed into the running XOR of the previous key's words.
    #[target_feature(enable = "aes")]
    fn next_round_key<const RCON: i32>(key: __m128i) -> __m128i {
        let assist = _mm_shuffle_epi32::<0xff>(_mm_aeskeygenassist_si128::<RCON>(key));
        let mut k = key;
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        k = _mm_xor_si128(k, _mm_slli_si128::<4>(k));
        _mm_xor_si128(k, assist)
    }

    /// The 11 round keys of `key` (16 little-endian bytes).
    #[target_feature(enable = "aes")]
    pub(super) fn expand(key: u128) -> [__m128i; 11] {
        let k0 = _mm_set_epi64x((key >> 64) as i64, key as i64);
        let k1 = next_round_key::<0x01>(k0);
        let k2 = next_round_key::<0x02>(k1);
        let k3 = next_round_key::<0x04>(k2);
        let k4 = next_round_key::<0x08>(k3);
        let k5 = next_round_key::<0x10>(k4);
        let k6 = next_round_key::<0x20>(k5);
        let k7 = next_round_key::<0x40>(k6);
        let k8 = next_round_key::<0x80>(k7);
        let k9 = next_round_key::<0x1b>(k8);
        let k10 = next_round_key::<0x36>(k9);
        [k0, k1, k2, k3, k4, k5, k6, k7, k8, k9, k10]
    }

    /// AES-128 of `block` (16 little-endian bytes) under `round_keys`.
    #[target_feature(enable = "aes")]
    pub(super) fn encrypt(round_keys: &[__m128i; 11], block: u128) -> u128 {
        let mut state = _mm_xor_si128(_mm_set_epi64x((block >> 64) as i64, block as i64), round_keys[0]);
        for &round_key in &round_keys[1..10] {
            state = _mm_aesenc_si128(state, round_key);
        }
        state = _mm_aesenclast_si128(state, round_keys[10]);
        let low = _mm_cvtsi128_si64(state) as u64;
        let high = _mm_cvtsi128_si64(_mm_unpackhi_epi64(state, state)) as u64;
        u128::from(low) | u128::from(high) << 64
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// The hasher with AES, where this CPU has it.
    fn with_aes() -> Option<RandomAesHash> {
        AesKey::for_process().map(|key| RandomAesHash::with_aes(Some(key)))
    }

    /// FIPS-197, appendix C.1: AES-128 of 00112233…ff under the key
    /// 00010203…0f is 69c4e0d8…c55a.
    #[test]
    fn the_cipher_is_fips_197s_aes_128() {
        let Some(key) = AesKey::expand(u128::from_le_bytes(std::array::from_fn(|i| i as u8))) else {
            assert!(!cfg!(target_arch = "x86_64") || !std::arch::is_x86_feature_detected!("aes"));
            return;
        };
        let plaintext = u128::from_le_bytes(std::array::from_fn(|i| (i as u8) * 0x11));
        let expected = [0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30, 0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a];
        assert_eq!(key.encrypt(plaintext).to_le_bytes(), expected);
    }

    /// A short stream is one block: the bytes, zeros, the length, XORed
    /// with the tweak, encrypted; the hash is the low half.
    #[test]
    fn a_short_key_is_one_encrypted_block() {
        let Some(hasher) = with_aes() else { return };
        let key = hasher.aes.expect("with AES");
        let block = u128::from(0x1122_3344_5566_7788_u64) | 8 << 120;
        assert_eq!(hasher.hash_one(0x1122_3344_5566_7788_u64), key.encrypt(block ^ hasher.tweak) as u64);
        // Zeros of different lengths are different blocks.
        let zeros: Vec<u64> = (0..=SHORT_MAX).map(|n| hash_bytes(&hasher, &[], &vec![0; n])).collect();
        for (i, a) in zeros.iter().enumerate() {
            assert!(zeros[i + 1..].iter().all(|b| a != b), "{zeros:x?}");
        }
    }

    /// Without AES instructions, every stream is SipHash-1-3's.
    #[test]
    fn without_aes_it_is_siphash_1_3() {
        let hasher = RandomAesHash::with_aes(None);
        for n in [0, 1, 8, 15, 16, 40] {
            let bytes: Vec<u8> = (0..n as u8).collect();
            let mut sip = SipHasher13::new_with_keys(hasher.sip_k0, hasher.sip_k1);
            sip.write(&bytes);
            assert_eq!(hash_bytes(&hasher, &[], &bytes), sip.finish(), "{n} bytes");
        }
    }

    /// A long stream is SipHash-1-3's, also with AES.
    #[test]
    fn a_long_key_is_siphash_1_3() {
        let Some(hasher) = with_aes() else { return };
        let bytes: Vec<u8> = (0..40).collect();
        let mut sip = SipHasher13::new_with_keys(hasher.sip_k0, hasher.sip_k1);
        sip.write(&bytes);
        assert_eq!(hash_bytes(&hasher, &bytes[..3], &bytes[3..]), sip.finish());
    }

    #[test]
    fn each_limiter_has_its_own_function() {
        let (a, b) = (RandomAesHash::new(), RandomAesHash::new());
        assert_ne!(a.hash_one(42u64), b.hash_one(42u64));
        assert_eq!(a.hash_one(42u64), a.hash_one(42u64));
        assert_eq!(a.hash_one("a longer key, hashed by SipHash"), a.hash_one("a longer key, hashed by SipHash"));
        assert_ne!(a.hash_one("a longer key, hashed by SipHash"), b.hash_one("a longer key, hashed by SipHash"));
        assert!(format!("{a:?}").ends_with(", .. }"));
    }

    /// The hash of `first` then `rest`, written as bytes.
    fn hash_bytes(hasher: &RandomAesHash, first: &[u8], rest: &[u8]) -> u64 {
        let mut h = hasher.build_hasher();
        h.write(first);
        h.write(rest);
        h.finish()
    }

    /// The hashers under test: with AES where there is, and without.
    fn both() -> Vec<RandomAesHash> {
        let mut hashers = vec![RandomAesHash::with_aes(None)];
        hashers.extend(with_aes());
        hashers
    }

    /// One integer write.
    #[derive(Debug, Clone)]
    enum Word {
        U8(u8),
        U16(u16),
        U32(u32),
        U64(u64),
        U128(u128),
        Usize(usize),
        I64(i64),
    }

    impl Word {
        fn write(&self, h: &mut AesHasher) {
            match *self {
                Word::U8(w) => h.write_u8(w),
                Word::U16(w) => h.write_u16(w),
                Word::U32(w) => h.write_u32(w),
                Word::U64(w) => h.write_u64(w),
                Word::U128(w) => h.write_u128(w),
                Word::Usize(w) => h.write_usize(w),
                Word::I64(w) => h.write_i64(w),
            }
        }

        fn bytes(&self) -> Vec<u8> {
            match *self {
                Word::U8(w) => w.to_le_bytes().to_vec(),
                Word::U16(w) => w.to_le_bytes().to_vec(),
                Word::U32(w) => w.to_le_bytes().to_vec(),
                Word::U64(w) => w.to_le_bytes().to_vec(),
                Word::U128(w) => w.to_le_bytes().to_vec(),
                Word::Usize(w) => w.to_le_bytes().to_vec(),
                Word::I64(w) => w.to_le_bytes().to_vec(),
            }
        }
    }

    fn words() -> impl Strategy<Value = Vec<Word>> {
        let word = prop_oneof![
            any::<u8>().prop_map(Word::U8),
            any::<u16>().prop_map(Word::U16),
            any::<u32>().prop_map(Word::U32),
            any::<u64>().prop_map(Word::U64),
            any::<u128>().prop_map(Word::U128),
            any::<usize>().prop_map(Word::Usize),
            any::<i64>().prop_map(Word::I64),
        ];
        proptest::collection::vec(word, 0..6)
    }

    proptest! {
        /// The hash is a function of the byte stream: however it was
        /// split, on either side of the 15-byte line.
        #[test]
        fn splits_do_not_matter(bytes in proptest::collection::vec(any::<u8>(), 0..40), cut in 0usize..40) {
            let cut = cut.min(bytes.len());
            for hasher in both() {
                let mut whole = hasher.build_hasher();
                whole.write(&bytes);
                prop_assert_eq!(whole.finish(), hash_bytes(&hasher, &bytes[..cut], &bytes[cut..]));
            }
        }

        /// An integer written as such hashes as its little-endian bytes.
        #[test]
        fn integers_are_their_little_endian_bytes(words in words()) {
            for hasher in both() {
                let mut by_word = hasher.build_hasher();
                let mut by_bytes = hasher.build_hasher();
                for word in &words {
                    word.write(&mut by_word);
                    by_bytes.write(&word.bytes());
                }
                prop_assert_eq!(by_word.finish(), by_bytes.finish());
            }
        }
    }
}
