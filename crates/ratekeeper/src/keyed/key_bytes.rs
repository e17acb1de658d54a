//! [`KeyBytes`]: a byte-string key kept inside the table's slot when short.
//!
//! The bindings key their limiters by strings and byte buffers: user ids,
//! IP addresses, `"user:42/post"`. As a `Box<[u8]>` every key is a separate
//! allocation (16 bytes in the slot, at least 32 more on the heap), and
//! comparing a key means following its pointer — a second cache miss per
//! lookup in a large table. Most such keys are short, so `KeyBytes` holds up
//! to [`INLINE`] bytes in its own 24 bytes and only longer keys on the heap.
//! It hashes and compares exactly as the `[u8]` it holds, so a table of
//! `KeyBytes` is looked up by `&[u8]` without building one.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

/// The longest key held inline.
pub const INLINE: usize = 22;

/// A byte-string key: inline up to [`INLINE`] bytes, on the heap beyond.
#[derive(Clone)]
pub struct KeyBytes(Repr);

#[derive(Clone)]
enum Repr {
    Inline { len: u8, bytes: [u8; INLINE] },
    Heap(Box<[u8]>),
}

impl KeyBytes {
    /// The key's bytes.
    #[inline]
    pub fn as_bytes(&self) -> &[u8] {
        match &self.0 {
            Repr::Inline { len, bytes } => &bytes[..usize::from(*len).min(INLINE)],
            Repr::Heap(bytes) => bytes,
        }
    }
}

impl From<&[u8]> for KeyBytes {
    fn from(key: &[u8]) -> Self {
        if key.len() <= INLINE {
            let mut bytes = [0; INLINE];
            bytes[..key.len()].copy_from_slice(key);
            KeyBytes(Repr::Inline { len: key.len() as u8, bytes })
        } else {
            KeyBytes(Repr::Heap(key.into()))
        }
    }
}

/// What `[u8]::to_owned` makes, so `KeyedLimiter::check(&[u8], …)` can
/// store a new key.
impl From<Vec<u8>> for KeyBytes {
    fn from(key: Vec<u8>) -> Self {
        if key.len() <= INLINE {
            KeyBytes::from(key.as_slice())
        } else {
            KeyBytes(Repr::Heap(key.into_boxed_slice()))
        }
    }
}

impl Borrow<[u8]> for KeyBytes {
    #[inline]
    fn borrow(&self) -> &[u8] {
        self.as_bytes()
    }
}

/// As the bytes hash: required of a `Borrow<[u8]>` key.
impl Hash for KeyBytes {
    #[inline]
    fn hash<H: Hasher>(&self, state: &mut H) {
        self.as_bytes().hash(state);
    }
}

impl PartialEq for KeyBytes {
    #[inline]
    fn eq(&self, other: &Self) -> bool {
        self.as_bytes() == other.as_bytes()
    }
}

impl Eq for KeyBytes {}

impl fmt::Debug for KeyBytes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "KeyBytes({:?})", String::from_utf8_lossy(self.as_bytes()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::hash::BuildHasher;

    #[test]
    fn short_keys_inline_long_ones_on_the_heap_both_as_bytes() {
        assert_eq!(std::mem::size_of::<KeyBytes>(), 24);
        let hasher = std::hash::RandomState::new();
        for len in [0, 1, INLINE - 1, INLINE, INLINE + 1, 100] {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let key = KeyBytes::from(bytes.clone());
            assert_eq!(key.as_bytes(), bytes.as_slice());
            assert_eq!(key, KeyBytes::from(bytes.as_slice()));
            assert_eq!(hasher.hash_one(&key), hasher.hash_one(bytes.as_slice()), "hashes as its bytes");
            assert_eq!(matches!(key.0, Repr::Inline { .. }), len <= INLINE);
        }
        assert_ne!(KeyBytes::from(b"ab".as_slice()), KeyBytes::from(b"ab\0".as_slice()));
        assert_eq!(format!("{:?}", KeyBytes::from(b"user:1".as_slice())), "KeyBytes(\"user:1\")");
    }
}
