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
//!
//! [`MaxKeyBytes`] is the one rule for how long such a key may be, for the
//! byte-keyed limiters here and the Redis limiters alike.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{Hash, Hasher};

use ratekeeper_core::{Argument, Error};

/// The longest key a byte-keyed limiter ([`AnyKeyedLimiter`]) or a Redis
/// limiter takes, in bytes.
///
/// A key is held whole for as long as its state is (and sent whole to
/// Redis with every decision), so without a bound the memory a keyed
/// limiter holds at `max_keys` keys — and the time one Redis call takes —
/// would be whatever its callers chose to send. A longer key is refused
/// with [`Argument::Key`] (the key's length as the value) and nothing is
/// stored or sent. The default, [`MaxKeyBytes::DEFAULT`] (256 bytes),
/// holds a user id, an IPv6 address, a route and an API key together;
/// a limiter keyed by longer strings sets its own, up to
/// [`MaxKeyBytes::LARGEST`].
///
/// [`AnyKeyedLimiter`]: super::AnyKeyedLimiter
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct MaxKeyBytes(u32);

impl MaxKeyBytes {
    /// 256 bytes.
    pub const DEFAULT: MaxKeyBytes = MaxKeyBytes(256);

    /// The largest bound a limiter may set: 64 KiB.
    pub const LARGEST: usize = 1 << 16;

    /// Keys of at most `bytes` bytes: 1 to [`LARGEST`](Self::LARGEST), else
    /// an [`Argument::MaxKeyBytes`] error.
    pub const fn new(bytes: usize) -> Result<Self, Error> {
        if bytes == 0 || bytes > Self::LARGEST {
            return Err(Error::invalid_uint(Argument::MaxKeyBytes, bytes as u64));
        }
        Ok(MaxKeyBytes(bytes as u32))
    }

    /// The bound in bytes.
    pub const fn get(self) -> usize {
        self.0 as usize
    }

    /// `key` if it is at most this long, else an [`Argument::Key`] error
    /// whose value is its length.
    #[inline]
    pub fn check(self, key: &[u8]) -> Result<&[u8], Error> {
        if key.len() > self.get() {
            return Err(Error::invalid_uint(Argument::Key, key.len() as u64));
        }
        Ok(key)
    }
}

impl Default for MaxKeyBytes {
    fn default() -> Self {
        Self::DEFAULT
    }
}

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
    fn max_key_bytes_takes_keys_up_to_its_bound() {
        assert_eq!(MaxKeyBytes::default().get(), 256);
        let bound = MaxKeyBytes::new(4).unwrap();
        assert_eq!(bound.check(b"abcd"), Ok(b"abcd".as_slice()));
        assert_eq!(bound.check(b""), Ok(b"".as_slice()));
        assert_eq!(bound.check(b"abcde"), Err(Error::invalid_int(Argument::Key, 5)));
        assert_eq!(MaxKeyBytes::new(0), Err(Error::invalid_int(Argument::MaxKeyBytes, 0)));
        assert_eq!(MaxKeyBytes::new(MaxKeyBytes::LARGEST).unwrap().get(), 65_536);
        assert_eq!(MaxKeyBytes::new(MaxKeyBytes::LARGEST + 1), Err(Error::invalid_int(Argument::MaxKeyBytes, 65_537)));
        let message = MaxKeyBytes::DEFAULT.check(&[b'k'; 300]).unwrap_err().to_string();
        assert!(
            message.starts_with("invalid argument key = 300: must be at most max_key_bytes bytes long"),
            "{message}"
        );
    }

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
