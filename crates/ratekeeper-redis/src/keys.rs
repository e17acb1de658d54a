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

/// Percent-encodes the bytes that structure a key.
pub(crate) fn escape(part: &str) -> String {
    let mut out = String::with_capacity(part.len());
    for b in part.bytes() {
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
        None => format!("rk:{{{}}}:{kind}", escape(name)),
        Some(k) => format!("rk:{{{}}}:{kind}:{}", escape(name), escape(k)),
    }
}

/// The key of user key `key`'s state in limiter `name`: the hash tag holds
/// both, so one user key's state stays in one Redis Cluster slot while a
/// limiter's keys spread over the cluster.
pub(crate) fn keyed_state_key(name: &str, key: &str, kind: &str) -> String {
    format!("rk:{{{}:{}}}:{kind}", escape(name), escape(key))
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
        assert_eq!(escape("100%"), "100%25");
        assert_eq!(escape("é x"), "%C3%A9%20x");
        assert_eq!(keyed_state_key("api", "alice", "gcra"), "rk:{api:alice}:gcra");
        assert_ne!(keyed_state_key("a:b", "c", "gcra"), keyed_state_key("a", "b:c", "gcra"));
    }
}
