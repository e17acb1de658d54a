//! The hashers of keyed limiters: [`RandomAesHash`] ([`DefaultKeyHasher`])
//! and [`RandomSipHash`], each a secret-keyed function drawn per limiter.
//!
//! A keyed limiter hashes every key once per decision, before it can start
//! loading the key's slot, so the hash is paid in full on the hot path; and
//! the keys often come from the people being limited, so the hash must be
//! one they cannot predict. These are the crate's own implementations of
//! two such functions, written for that path: see each module for why it
//! is built as it is.

mod aes;
mod sip;

pub use aes::{AesHasher, RandomAesHash};
pub use sip::{RandomSipHash, SipHasher13};

/// The hasher keyed limiters use unless told otherwise: AES-128 under a
/// secret key for keys of up to 15 bytes and SipHash-1-3 (the function of
/// std's `RandomState`) for longer ones, each limiter with its own random
/// tweak and key ([`RandomAesHash`]; without AES instructions, SipHash-1-3
/// throughout, as [`RandomSipHash`]). Keys often come from the people
/// being limited, and a program that runs for months can be studied: a
/// keyed cryptographic function keeps them from choosing keys that collide
/// (which would make a shard's probes long). Faster non-cryptographic
/// hashers (foldhash, FxHash) say themselves that they are not for that;
/// pass one to [`KeyedLimiter::with_clock_and_hasher`] only for keys no
/// outsider chooses.
///
/// [`KeyedLimiter::with_clock_and_hasher`]: super::KeyedLimiter::with_clock_and_hasher
pub type DefaultKeyHasher = RandomAesHash;
