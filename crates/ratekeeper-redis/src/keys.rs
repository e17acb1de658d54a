//! Key names: every Redis key a limiter uses, built so that no name a user
//! passes can collide with another limiter's keys, and so that one
//! limiter's keys share a Redis Cluster hash slot.
//!
//! A limiter named `N` with user key `K` lives under
//! `rk:{<N escaped>}:<kind>:<K escaped>`. The braces are a hash tag: Redis
//! Cluster hashes only what is inside them. Escaping percent-encodes `%`,
//! `{`, `}` and `:` (and any byte outside printable ASCII), so an escaped
//! part never contains the separators and two different inputs never give
//! the same key.
//!
//! User keys are byte strings (a text key is its UTF-8), escaped byte by
//! byte: any bytes, UTF-8 or not, make a key of printable ASCII, and two
//! different byte strings never make the same one.

/// Percent-encodes the bytes that structure a key.
pub(crate) fn escape(part: &[u8]) -> String {
    let mut out = String::with_capacity(part.len());
    for &b in part {
        match b {
            b'%' | b'{' | b'}' | b':' => out.push_str(&format!("%{b:02X}")),
            0x21..=0x7e => out.push(b as char),
            _ => out.push_str(&format!("%{b:02X}")),
        }
    }
    out
}

/// The key of a limiter's state, for `kind` (`smooth`, `gcra`, …) and an
/// optional per-user key.
pub(crate) fn state_key(name: &str, kind: &str, user_key: Option<&str>) -> String {
    match user_key {
        None => format!("rk:{{{}}}:{kind}", escape(name.as_bytes())),
        Some(k) => format!("rk:{{{}}}:{kind}:{}", escape(name.as_bytes()), escape(k.as_bytes())),
    }
}

/// The key of user key `key`'s state in limiter `name`: the hash tag holds
/// both, so one user key's state stays in one Redis Cluster slot while a
/// limiter's keys spread over the cluster.
pub(crate) fn keyed_state_key(name: &str, key: &[u8], kind: &str) -> String {
    format!("rk:{{{}:{}}}:{kind}", escape(name.as_bytes()), escape(key))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn separators_are_escaped_so_keys_cannot_collide() {
        assert_eq!(state_key("api", "gcra", Some("alice")), "rk:{api}:gcra:alice");
        // Without escaping, these two would both be "rk:{a:b}:gcra:c".
        assert_ne!(state_key("a:b", "gcra", Some("c")), state_key("a", "gcra", Some("b:c")));
        assert_eq!(state_key("a}b{", "smooth", None), "rk:{a%7Db%7B}:smooth");
        assert_eq!(escape(b"100%"), "100%25");
        assert_eq!(escape("é x".as_bytes()), "%C3%A9%20x");
        assert_eq!(keyed_state_key("api", b"alice", "gcra"), "rk:{api:alice}:gcra");
        assert_ne!(keyed_state_key("a:b", b"c", "gcra"), keyed_state_key("a", b"b:c", "gcra"));
    }

    #[test]
    fn any_bytes_make_a_key_and_different_bytes_different_keys() {
        // Not UTF-8: each byte escaped as it is, never replaced.
        assert_eq!(keyed_state_key("api", b"\xff\xfe\0", "gcra"), "rk:{api:%FF%FE%00}:gcra");
        assert_ne!(escape(b"\xff"), escape(b"\xfe"));
        assert_ne!(escape(b"\xff"), escape("\u{fffd}".as_bytes()));
        // A text key is its UTF-8: the same Redis key as those bytes.
        assert_eq!(keyed_state_key("api", "é".as_bytes(), "gcra"), keyed_state_key("api", b"\xc3\xa9", "gcra"));
    }
}
