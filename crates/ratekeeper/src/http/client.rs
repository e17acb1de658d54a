//! The client's address behind proxies, trusting only the proxies named.
//!
//! Any client can send `X-Forwarded-For: 1.2.3.4`; keyed on it blindly, a
//! limiter gives every request a fresh key. So the walk starts from what
//! cannot be forged — the TCP peer — and believes a forwarding header only
//! as far as the hops that wrote it are proxies the operator trusts: each
//! proxy appends the address it received the request from, so the
//! rightmost entry was written by the peer, the one before it by that
//! hop, and so on. The first hop not in the trusted list is the client.

use std::fmt;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// The proxies whose forwarding headers are believed: a list of address
/// blocks.
///
/// IPv4-mapped IPv6 addresses (`::ffff:10.0.0.1`, what a dual-stack socket
/// reports for an IPv4 peer) compare as the IPv4 address, both in the list
/// and when checked.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    blocks: Vec<(IpAddr, u8)>,
}

/// Why a trusted-proxy entry was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TrustedProxyError {
    /// Which entry (0 for the first).
    pub index: usize,
    /// What the entry should have been.
    pub expected: &'static str,
}

/// `"invalid trusted proxy at index 1: expected an IP address, …"`.
impl fmt::Display for TrustedProxyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "invalid trusted proxy at index {}: expected {}", self.index, self.expected)
    }
}

impl std::error::Error for TrustedProxyError {}

const EXPECTED_ENTRY: &str = "an IP address, a CIDR block (\"10.0.0.0/8\", \"fd00::/8\"), \"loopback\" or \"private\"";
const EXPECTED_V4_PREFIX: &str = "a prefix length from 0 to 32 after an IPv4 address";
const EXPECTED_V6_PREFIX: &str = "a prefix length from 0 to 128 after an IPv6 address";

/// `loopback`: 127.0.0.0/8 (RFC 1122 §3.2.1.3) and ::1 (RFC 4291 §2.5.3).
const LOOPBACK: [(IpAddr, u8); 2] =
    [(IpAddr::V4(Ipv4Addr::new(127, 0, 0, 0)), 8), (IpAddr::V6(Ipv6Addr::LOCALHOST), 128)];

/// `private`: the RFC 1918 blocks and IPv6 unique local addresses
/// (fc00::/7, RFC 4193).
const PRIVATE: [(IpAddr, u8); 4] = [
    (IpAddr::V4(Ipv4Addr::new(10, 0, 0, 0)), 8),
    (IpAddr::V4(Ipv4Addr::new(172, 16, 0, 0)), 12),
    (IpAddr::V4(Ipv4Addr::new(192, 168, 0, 0)), 16),
    (IpAddr::V6(Ipv6Addr::new(0xfc00, 0, 0, 0, 0, 0, 0, 0)), 7),
];

impl TrustedProxies {
    /// No proxy is trusted: the client is always the TCP peer (the safe
    /// default, right when the server faces the Internet directly).
    pub fn none() -> Self {
        TrustedProxies::default()
    }

    /// The proxies named by `entries`: an address (`"::1"`,
    /// `"192.168.1.7"`), a CIDR block (`"10.0.0.0/8"`; bits past the prefix
    /// are ignored), or the names `"loopback"` and `"private"` (RFC 1918 and
    /// fc00::/7), case-insensitive; spaces around an entry are ignored.
    /// Errors name the first bad entry's index.
    pub fn parse<'a>(entries: impl IntoIterator<Item = &'a str>) -> Result<Self, TrustedProxyError> {
        let mut blocks = Vec::new();
        for (index, entry) in entries.into_iter().enumerate() {
            let entry = entry.trim();
            let error = |expected| TrustedProxyError { index, expected };
            if entry.eq_ignore_ascii_case("loopback") {
                blocks.extend(LOOPBACK);
                continue;
            }
            if entry.eq_ignore_ascii_case("private") {
                blocks.extend(PRIVATE);
                continue;
            }
            let (address, prefix) = match entry.split_once('/') {
                Some((address, prefix)) => (address, Some(prefix)),
                None => (entry, None),
            };
            let address: IpAddr = address.parse().map_err(|_| error(EXPECTED_ENTRY))?;
            let (max, expected) = match address {
                IpAddr::V4(_) => (32, EXPECTED_V4_PREFIX),
                IpAddr::V6(_) => (128, EXPECTED_V6_PREFIX),
            };
            let prefix = match prefix {
                None => max,
                // Digits only: `u8::from_str` would also take a `+`.
                Some(p) if !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()) => {
                    p.parse::<u8>().ok().filter(|&n| n <= max).ok_or(error(expected))?
                }
                Some(_) => return Err(error(expected)),
            };
            blocks.push(canonical_block(address, prefix));
        }
        Ok(TrustedProxies { blocks })
    }

    /// Whether `ip` is in one of the blocks.
    #[inline]
    pub fn contains(&self, ip: IpAddr) -> bool {
        if self.blocks.is_empty() {
            return false;
        }
        let ip = canonical(ip);
        self.blocks.iter().any(|&(network, prefix)| match (network, ip) {
            (IpAddr::V4(n), IpAddr::V4(a)) => {
                masked(u128::from(n.to_bits()), prefix, 32) == masked(u128::from(a.to_bits()), prefix, 32)
            }
            (IpAddr::V6(n), IpAddr::V6(a)) => masked(n.to_bits(), prefix, 128) == masked(a.to_bits(), prefix, 128),
            _ => false,
        })
    }

    /// Whether no proxy is trusted.
    pub fn is_empty(&self) -> bool {
        self.blocks.is_empty()
    }
}

/// The top `prefix` bits of a `width`-bit address.
fn masked(bits: u128, prefix: u8, width: u32) -> u128 {
    let host_bits = width - u32::from(prefix);
    if host_bits >= 128 {
        0
    } else {
        bits >> host_bits
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address (RFC 4291 §2.5.5.2): a
/// dual-stack socket reports IPv4 peers that way.
#[inline]
fn canonical(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        v4 => v4,
    }
}

/// A block of IPv4-mapped addresses (`::ffff:10.0.0.0/104`) as the IPv4
/// block it maps.
fn canonical_block(address: IpAddr, prefix: u8) -> (IpAddr, u8) {
    match (address, canonical(address)) {
        (IpAddr::V6(_), v4 @ IpAddr::V4(_)) if prefix >= 96 => (v4, prefix - 96),
        _ => (address, prefix),
    }
}

/// The client's address for a request that arrived from `peer` carrying
/// the given `Forwarded` ([RFC 7239]) and `X-Forwarded-For` field values
/// (several field lines joined by `", "`, as HTTP allows).
///
/// Starting at the peer, while the current hop is a trusted proxy, the walk
/// steps to the hop before it: the next entry leftwards in `Forwarded`'s
/// `for=` parameters (preferred when the field is present and not blank:
/// it is the standard) or else in `X-Forwarded-For`. The first untrusted
/// hop is the client. So an untrusted peer's headers are never read, and a
/// client that forges entries only adds hops left of the one our proxies
/// wrote. The walk stops at the current hop when the next entry is
/// malformed, obfuscated (`for=_hidden`) or `unknown` (RFC 7239 §6), or
/// when an element has no `for=`; when every entry is trusted the leftmost
/// is the answer. IPv4-mapped IPv6 addresses are returned as IPv4.
///
/// [RFC 7239]: https://www.rfc-editor.org/rfc/rfc7239
pub fn client_address(
    peer: IpAddr,
    forwarded: Option<&str>,
    x_forwarded_for: Option<&str>,
    trusted: &TrustedProxies,
) -> IpAddr {
    let mut current = canonical(peer);
    if !trusted.contains(current) {
        return current;
    }
    let hops: Vec<Option<IpAddr>> = match forwarded.filter(|f| !f.trim().is_empty()) {
        Some(forwarded) => forwarded_for(forwarded),
        None => match x_forwarded_for {
            Some(xff) => xff.split(',').map(node_address).collect(),
            None => Vec::new(),
        },
    };
    for hop in hops.into_iter().rev() {
        match hop {
            Some(ip) => {
                current = canonical(ip);
                if !trusted.contains(current) {
                    return current;
                }
            }
            None => return current,
        }
    }
    current
}

/// How many leading bits of an IPv6 client's address are its key: a
/// subscriber is given a whole /56 or /64 and can take any address in it,
/// so keyed by the full address, one client could rotate through 2^64
/// keys and never meet its limit. Every address of the block shares the
/// key of the block's network address, as express-rate-limit 8's
/// `ipv6Subnet` (56 by default). IPv4 addresses are always whole.
///
/// Valid from [`MIN_BITS`](Self::MIN_BITS) to [`MAX_BITS`](Self::MAX_BITS)
/// (128: the full address, one key per address); checked here only, for
/// every language's middleware.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Ipv6Prefix(u8);

impl Ipv6Prefix {
    /// The narrowest prefix: 1 bit (express-rate-limit's lower bound).
    pub const MIN_BITS: u8 = 1;
    /// The widest: 128 bits, the whole address.
    pub const MAX_BITS: u8 = 128;
    /// /56, what ISPs commonly delegate to one subscriber, and
    /// express-rate-limit 8's default.
    pub const DEFAULT: Ipv6Prefix = Ipv6Prefix(56);
    /// The whole address: one key per IPv6 address.
    pub const FULL: Ipv6Prefix = Ipv6Prefix(128);

    /// A prefix of `bits` (from 1 to 128). Signed and wide so that every
    /// binding hands over whatever number it was given, and the range is
    /// checked here.
    pub const fn new(bits: i64) -> Result<Self, Ipv6PrefixError> {
        if bits < Self::MIN_BITS as i64 || bits > Self::MAX_BITS as i64 {
            return Err(Ipv6PrefixError { bits });
        }
        Ok(Ipv6Prefix(bits as u8))
    }

    /// The prefix's length in bits.
    pub const fn bits(self) -> u8 {
        self.0
    }
}

impl Default for Ipv6Prefix {
    fn default() -> Self {
        Self::DEFAULT
    }
}

/// An IPv6 key prefix out of range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ipv6PrefixError {
    /// The length asked for.
    pub bits: i64,
}

/// `"invalid IPv6 prefix 0: expected a length from 1 to 128 bits"`.
impl fmt::Display for Ipv6PrefixError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "invalid IPv6 prefix {}: expected a length from {} to {} bits",
            self.bits,
            Ipv6Prefix::MIN_BITS,
            Ipv6Prefix::MAX_BITS
        )
    }
}

impl std::error::Error for Ipv6PrefixError {}

/// The address a client at `ip` is limited under: an IPv4 address (and an
/// IPv4-mapped IPv6 one, as IPv4) as it is, an IPv6 address as the network
/// address of its `ipv6_prefix` block (`2001:db8:0:1ff::7` with /56 is
/// `2001:db8:0:100::`). [`ClientKey`] is this address with its text.
#[inline]
pub fn client_key_address(ip: IpAddr, ipv6_prefix: Ipv6Prefix) -> IpAddr {
    match canonical(ip) {
        IpAddr::V6(v6) => {
            let host_bits = 128 - u32::from(ipv6_prefix.0);
            let mask = u128::MAX.checked_shl(host_bits).unwrap_or(0);
            IpAddr::V6(Ipv6Addr::from_bits(v6.to_bits() & mask))
        }
        v4 => v4,
    }
}

/// A client's key: its [`client_key_address`], written as text the same
/// way by every language's middleware (so that they share a Redis
/// limiter's keys): IPv4 dotted (`203.0.113.7`), an IPv6 block in CIDR
/// notation (`2001:db8:0:100::/56`, as express-rate-limit writes it), a
/// whole IPv6 address (prefix 128) alone (`2001:db8::7`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ClientKey {
    /// The address's bits (an IPv4 address's in the low 32), whole
    /// integers rather than an `IpAddr`, whose bytes sit after its tag and
    /// are slow to move about.
    bits: u128,
    v6: bool,
    prefix: Ipv6Prefix,
}

impl ClientKey {
    /// The key of a client at `ip`.
    #[inline]
    pub fn new(ip: IpAddr, ipv6_prefix: Ipv6Prefix) -> Self {
        match client_key_address(ip, ipv6_prefix) {
            IpAddr::V4(v4) => ClientKey { bits: u128::from(v4.to_bits()), v6: false, prefix: ipv6_prefix },
            IpAddr::V6(v6) => ClientKey { bits: v6.to_bits(), v6: true, prefix: ipv6_prefix },
        }
    }

    /// The address the client is limited under.
    pub fn address(&self) -> IpAddr {
        if self.v6 {
            IpAddr::V6(Ipv6Addr::from_bits(self.bits))
        } else {
            IpAddr::V4(Ipv4Addr::from_bits(self.bits as u32))
        }
    }

    /// The address's bytes, `.1` of them: 4 for IPv4; 16 for IPv6, or 15
    /// when the prefix is at most 120 bits (the last byte is then always
    /// 0, and a key of up to 15 bytes takes the keyed limiter's faster
    /// hash). A key as good as the text for a limiter in this process (one
    /// client, one key, and no IPv4 key the length of an IPv6 one),
    /// without formatting. Not the key other processes use: that is the
    /// text.
    #[inline]
    pub fn compact(&self) -> ([u8; 16], usize) {
        if self.v6 {
            (self.bits.to_be_bytes(), if self.prefix.0 <= 120 { 15 } else { 16 })
        } else {
            ((self.bits << 96).to_be_bytes(), 4)
        }
    }
}

impl fmt::Display for ClientKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.address() {
            IpAddr::V6(v6) if self.prefix != Ipv6Prefix::FULL => write!(f, "{v6}/{}", self.prefix.0),
            address => address.fmt(f),
        }
    }
}

/// The `for=` address of each element of a `Forwarded` value (RFC 7239 §4:
/// elements split by `,`, pairs by `;`, values tokens or quoted strings),
/// `None` for an element without a usable one.
fn forwarded_for(value: &str) -> Vec<Option<IpAddr>> {
    let mut elements = Vec::new();
    let mut current: Option<IpAddr> = None;
    let mut seen_for = false;
    let mut bad = false;
    // Splits on `,` and `;` outside quoted strings.
    for (pair, end_of_element) in split_pairs(value) {
        let pair = pair.trim();
        if let Some((name, raw)) = pair.split_once('=') {
            if name.trim().eq_ignore_ascii_case("for") {
                // A second `for` in one element is malformed (§4: each
                // parameter at most once).
                bad |= seen_for;
                seen_for = true;
                current = unquote(raw.trim()).and_then(|v| node_address(&v));
            }
        } else if !pair.is_empty() {
            bad = true;
        }
        if end_of_element {
            elements.push(if bad { None } else { current });
            current = None;
            seen_for = false;
            bad = false;
        }
    }
    elements
}

/// The pairs of a `Forwarded` value, each with whether it ends its
/// element; a `,` or `;` inside a quoted string does not split.
fn split_pairs(value: &str) -> Vec<(&str, bool)> {
    let mut out = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, b) in value.bytes().enumerate() {
        match b {
            _ if escaped => escaped = false,
            b'\\' if quoted => escaped = true,
            b'"' => quoted = !quoted,
            b';' | b',' if !quoted => {
                out.push((&value[start..i], b == b','));
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push((&value[start..], true));
    out
}

/// A token as is, or a quoted string without its quotes and escapes
/// (RFC 9110 §5.6.4); `None` for an unterminated quote.
fn unquote(raw: &str) -> Option<String> {
    let Some(inner) = raw.strip_prefix('"') else {
        return (!raw.contains('"')).then(|| raw.to_string());
    };
    let inner = inner.strip_suffix('"')?;
    let mut out = String::with_capacity(inner.len());
    let mut chars = inner.chars();
    while let Some(c) = chars.next() {
        out.push(if c == '\\' { chars.next()? } else { c });
    }
    Some(out)
}

/// The address of a node (RFC 7239 §6): `192.0.2.43`, `192.0.2.43:47011`,
/// `[2001:db8:cafe::17]`, `[2001:db8:cafe::17]:4711`, and, as proxies send
/// in `X-Forwarded-For`, a bare IPv6 address. `None` for `unknown`, an
/// obfuscated name or anything else.
fn node_address(node: &str) -> Option<IpAddr> {
    let node = node.trim();
    if let Ok(ip) = node.parse::<IpAddr>() {
        return Some(ip);
    }
    let (host, port) = if let Some(rest) = node.strip_prefix('[') {
        let (v6, after) = rest.split_once(']')?;
        let ip = IpAddr::V6(v6.parse().ok()?);
        return match after {
            "" => Some(ip),
            _ => after.strip_prefix(':').filter(|p| valid_port(p)).map(|_| ip),
        };
    } else {
        node.split_once(':')?
    };
    let ip: Ipv4Addr = host.parse().ok()?;
    valid_port(port).then_some(IpAddr::V4(ip))
}

/// A port (§6: 1 to 5 digits) or an obfuscated one (`_` then letters,
/// digits, `.`, `_`, `-`).
fn valid_port(port: &str) -> bool {
    let digits = !port.is_empty() && port.len() <= 5 && port.bytes().all(|b| b.is_ascii_digit());
    let obfuscated = port.len() > 1
        && port.starts_with('_')
        && port.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    digits || obfuscated
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> IpAddr {
        text.parse().unwrap()
    }

    fn trusted(entries: &[&str]) -> TrustedProxies {
        TrustedProxies::parse(entries.iter().copied()).unwrap()
    }

    #[test]
    fn parse_takes_addresses_blocks_and_names() {
        let t = trusted(&["10.0.0.0/8", " ::1 ", "192.168.1.7/32", "2001:db8::/32", "10.1.2.3/16"]);
        for yes in ["10.255.0.1", "::1", "192.168.1.7", "2001:db8:ffff::1", "::ffff:10.9.9.9"] {
            assert!(t.contains(ip(yes)), "{yes}");
        }
        for no in ["11.0.0.1", "::2", "192.168.1.8", "2001:db9::1", "127.0.0.1", "::ffff:11.0.0.1"] {
            assert!(!t.contains(ip(no)), "{no}");
        }
        let named = trusted(&["Loopback", "PRIVATE"]);
        for yes in ["127.8.9.10", "::1", "10.0.0.1", "172.31.255.255", "192.168.0.1", "fd12::1", "fc00::1"] {
            assert!(named.contains(ip(yes)), "{yes}");
        }
        for no in ["172.32.0.1", "8.8.8.8", "fe80::1", "::2"] {
            assert!(!named.contains(ip(no)), "{no}");
        }
        // A mapped block is its IPv4 block; /0 is everything of its family.
        assert!(trusted(&["::ffff:10.0.0.0/104"]).contains(ip("10.1.1.1")));
        assert!(trusted(&["0.0.0.0/0"]).contains(ip("203.0.113.9")));
        assert!(!trusted(&["0.0.0.0/0"]).contains(ip("2001:db8::1")));
        assert!(trusted(&["::/0"]).contains(ip("2001:db8::1")));
        assert!(TrustedProxies::none().is_empty());
        assert!(!TrustedProxies::none().contains(ip("127.0.0.1")));
    }

    #[test]
    fn parse_errors_name_the_entry() {
        let cases: &[(&[&str], usize, &str)] = &[
            (&["10.0.0.0/8", "nope"], 1, EXPECTED_ENTRY),
            (&[""], 0, EXPECTED_ENTRY),
            (&["10.0.0.0/33"], 0, EXPECTED_V4_PREFIX),
            (&["10.0.0.0/"], 0, EXPECTED_V4_PREFIX),
            (&["10.0.0.0/+8"], 0, EXPECTED_V4_PREFIX),
            (&["::1", "::/129"], 1, EXPECTED_V6_PREFIX),
            (&["256.0.0.1"], 0, EXPECTED_ENTRY),
            (&["[::1]"], 0, EXPECTED_ENTRY),
        ];
        for (entries, index, expected) in cases {
            let err = TrustedProxies::parse(entries.iter().copied()).unwrap_err();
            assert_eq!(err, TrustedProxyError { index: *index, expected }, "{entries:?}");
        }
        assert!(TrustedProxies::parse(["x"]).unwrap_err().to_string().starts_with("invalid trusted proxy at index 0"));
    }

    #[test]
    fn an_untrusted_peer_headers_are_ignored() {
        let t = trusted(&["10.0.0.0/8"]);
        let peer = ip("203.0.113.5");
        assert_eq!(client_address(peer, None, Some("1.2.3.4"), &t), peer);
        assert_eq!(client_address(peer, Some("for=1.2.3.4"), None, &t), peer);
        assert_eq!(client_address(peer, None, Some("1.2.3.4"), &TrustedProxies::none()), peer);
        // No proxies trusted: even a loopback peer's header is ignored.
        let lo = ip("127.0.0.1");
        assert_eq!(client_address(lo, None, Some("1.2.3.4"), &TrustedProxies::none()), lo);
    }

    #[test]
    fn the_walk_goes_through_trusted_hops_only() {
        let t = trusted(&["10.0.0.0/8"]);
        let peer = ip("10.0.0.2");
        // Client 198.51.100.7 → proxy 10.0.0.1 → proxy 10.0.0.2 → us; the
        // client prepended a spoofed entry, which is left of the real one.
        let xff = "6.6.6.6, 198.51.100.7, 10.0.0.1";
        assert_eq!(client_address(peer, None, Some(xff), &t), ip("198.51.100.7"));
        // One proxy: the rightmost entry is the client.
        assert_eq!(client_address(peer, None, Some("6.6.6.6, 198.51.100.7"), &t), ip("198.51.100.7"));
        // Every entry trusted: the leftmost.
        assert_eq!(client_address(peer, None, Some("10.9.9.9, 10.0.0.1"), &t), ip("10.9.9.9"));
        // A trusted peer without headers is the client.
        assert_eq!(client_address(peer, None, None, &t), peer);
        // Forwarded is preferred over X-Forwarded-For; a blank one is absent.
        assert_eq!(client_address(peer, Some("for=192.0.2.60"), Some("6.6.6.6"), &t), ip("192.0.2.60"));
        assert_eq!(client_address(peer, Some("  "), Some("192.0.2.61"), &t), ip("192.0.2.61"));
    }

    #[test]
    fn forwarded_with_quotes_ipv6_ports_and_parameters() {
        let t = trusted(&["10.0.0.0/8", "2001:db8:cafe::/48"]);
        let peer = ip("10.0.0.2");
        let cases = [
            ("for=\"[2001:db8::17]:4711\"", "2001:db8::17"),
            ("for=\"[2001:db8::17]\"", "2001:db8::17"),
            ("For=192.0.2.60;proto=http;by=203.0.113.43", "192.0.2.60"),
            ("for=\"192.0.2.43:47011\"", "192.0.2.43"),
            ("for=192.0.2.43, for=\"[2001:db8:cafe::17]\"", "192.0.2.43"),
            ("for=198.51.100.17;by=10.0.0.1, for=10.0.0.1;proto=\"h;t,t\\\"p\"", "198.51.100.17"),
            ("for=\"[2001:db8::1]:_port\"", "2001:db8::1"),
            ("for=\"::ffff:192.0.2.1\"", "192.0.2.1"),
        ];
        for (forwarded, want) in cases {
            assert_eq!(client_address(peer, Some(forwarded), None, &t), ip(want), "{forwarded}");
        }
    }

    #[test]
    fn malformed_entries_stop_the_walk_at_the_last_good_hop() {
        let t = trusted(&["10.0.0.0/8"]);
        let peer = ip("10.0.0.2");
        for xff in ["1.2.3.4, garbage", "1.2.3.4,", "1.2.3.4, 10.0.0.1:123456", "1.2.3.4, unknown"] {
            assert_eq!(client_address(peer, None, Some(xff), &t), peer, "{xff}");
        }
        assert_eq!(client_address(peer, None, Some("1.2.3.4, junk, 10.0.0.1"), &t), ip("10.0.0.1"));
        for forwarded in [
            "for=unknown",
            "for=_hidden",
            "proto=https",
            "for=\"[2001:db8::1\"",
            "for=\"unterminated",
            "for=1.2.3.4;for=5.6.7.8",
            "for=1.2.3.4;junk",
            "for=[2001:db8::1]x",
            "for=1.2.3.4:",
        ] {
            assert_eq!(client_address(peer, Some(forwarded), None, &t), peer, "{forwarded}");
        }
    }

    mod properties {
        use super::*;
        use proptest::prelude::*;

        proptest! {
            #![proptest_config(ProptestConfig { cases: 1024, ..ProptestConfig::default() })]

            /// Whatever the fields say, the answer is the peer or an
            /// address they hold, and an untrusted peer is always the
            /// answer.
            #[test]
            fn the_answer_is_the_peer_or_an_entry(
                peer in any::<[u8; 4]>(),
                forwarded in proptest::option::of("[0-9a-f.:\\[\\]\"=;, _forFOR]{0,48}"),
                xff in proptest::option::of("[0-9a-f.:, \\[\\]]{0,48}"),
            ) {
                let peer = IpAddr::from(peer);
                let everything = trusted(&["0.0.0.0/0", "::/0"]);
                let got = client_address(peer, forwarded.as_deref(), xff.as_deref(), &everything);
                let seen = format!("{} {}", forwarded.as_deref().unwrap_or(""), xff.as_deref().unwrap_or(""));
                prop_assert!(got == peer || got.is_ipv6() || seen.contains(&got.to_string()), "{got} from {seen:?}");
                let untrusted = client_address(peer, forwarded.as_deref(), xff.as_deref(), &TrustedProxies::none());
                prop_assert_eq!(untrusted, peer);
            }
        }
    }

    #[test]
    fn ipv6_keys_are_their_block_ipv4_ones_whole() {
        let key = |text: &str, bits: i64| ClientKey::new(ip(text), Ipv6Prefix::new(bits).unwrap()).to_string();
        assert_eq!(key("2001:db8:0:1ff:aaaa::7", 56), "2001:db8:0:100::/56");
        assert_eq!(key("2001:db8:0:1ff:aaaa::7", 64), "2001:db8:0:1ff::/64");
        assert_eq!(key("2001:db8:0:1ff:aaaa::7", 128), "2001:db8:0:1ff:aaaa::7");
        assert_eq!(key("ffff::1", 1), "8000::/1");
        assert_eq!(key("203.0.113.7", 56), "203.0.113.7");
        assert_eq!(key("::ffff:203.0.113.7", 1), "203.0.113.7");
        // Two addresses of one /56 share a key; the next /56 has its own.
        let a = ClientKey::new(ip("2001:db8:0:100::1"), Ipv6Prefix::DEFAULT);
        assert_eq!(a, ClientKey::new(ip("2001:db8:0:1ff:ffff::2"), Ipv6Prefix::default()));
        assert_ne!(a, ClientKey::new(ip("2001:db8:0:200::1"), Ipv6Prefix::DEFAULT));
        assert_eq!(a.compact(), (ip6_octets("2001:db8:0:100::"), 15));
        let whole = ClientKey::new(ip("2001:db8::1"), Ipv6Prefix::new(121).unwrap()).compact();
        assert_eq!(whole, (ip6_octets("2001:db8::"), 16));
        let v4 = ClientKey::new(ip("192.0.2.9"), Ipv6Prefix::DEFAULT).compact();
        assert_eq!(&v4.0[..v4.1], &[192, 0, 2, 9]);
        assert_eq!(client_key_address(ip("2001:db8::1"), Ipv6Prefix::FULL), ip("2001:db8::1"));
    }

    fn ip6_octets(text: &str) -> [u8; 16] {
        text.parse::<Ipv6Addr>().unwrap().octets()
    }

    #[test]
    fn ipv6_prefixes_out_of_range_are_refused() {
        for bits in [0, -1, 129, i64::MAX, i64::MIN] {
            assert_eq!(Ipv6Prefix::new(bits), Err(Ipv6PrefixError { bits }));
        }
        assert_eq!(Ipv6Prefix::new(1).unwrap().bits(), 1);
        assert_eq!(Ipv6Prefix::new(128), Ok(Ipv6Prefix::FULL));
        assert_eq!(Ipv6Prefix::default().bits(), 56);
        assert_eq!(
            Ipv6Prefix::new(0).unwrap_err().to_string(),
            "invalid IPv6 prefix 0: expected a length from 1 to 128 bits"
        );
    }

    #[test]
    fn ipv4_mapped_addresses_compare_and_return_as_ipv4() {
        let t = trusted(&["10.0.0.0/8"]);
        let mapped_peer = ip("::ffff:10.0.0.2");
        assert_eq!(client_address(mapped_peer, None, Some("::ffff:192.0.2.9"), &t), ip("192.0.2.9"));
        assert_eq!(client_address(ip("::ffff:203.0.113.1"), None, Some("1.1.1.1"), &t), ip("203.0.113.1"));
        assert_eq!(client_address(mapped_peer, None, Some("::ffff:10.0.0.3"), &t), ip("10.0.0.3"));
    }
}
