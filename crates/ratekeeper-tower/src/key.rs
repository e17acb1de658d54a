//! Which key a request is limited under: the [`KeyExtractor`] trait, the
//! client's address ([`ClientAddress`], the default), a header's value
//! ([`HeaderKey`]), or any closure `Fn(&Request<B>) -> Option<K>`.

use std::fmt;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::header::{HeaderName, FORWARDED};
use http::{HeaderValue, Request};
use ratekeeper::http::{client_address, ClientKey, Ipv6Prefix, TrustedProxies};

/// What a request is limited by: its key, or `None` when it has none (what
/// the layer then does is [`NoKey`](crate::NoKey)'s choice).
///
/// Implemented for [`ClientAddress`], [`HeaderKey`] and every closure
/// `Fn(&Request<B>) -> Option<K>` whose key is bytes (`K: AsRef<[u8]>`: a
/// `String`, a `Vec<u8>`, a `&'static str`, a [`HeaderValue`]). The key is
/// handed to the limiter as those bytes, so a key of text is its UTF-8,
/// the same key as the Python and Node middleware's for the same text
/// (which matters when they share a Redis limiter).
pub trait KeyExtractor<B>: Clone + Send + Sync + 'static {
    /// The key's type.
    type Key: AsRef<[u8]>;

    /// The request's key, if it has one.
    fn extract(&self, request: &Request<B>) -> Option<Self::Key>;

    /// The request's key for a limiter whose keys never leave this process
    /// ([`KeyedCheck::LOCAL_KEYS`](crate::KeyedCheck::LOCAL_KEYS)): the
    /// same client's key in a form that may be cheaper to make (what
    /// [`ClientAddress`] gives: the address's bytes, not its text), as long
    /// as two requests get equal keys exactly when [`extract`](Self::extract)
    /// gives them equal keys. By default, [`extract`](Self::extract)'s.
    #[inline]
    fn extract_local(&self, request: &Request<B>) -> Option<Self::Key> {
        self.extract(request)
    }
}

impl<B, F, K> KeyExtractor<B> for F
where
    F: Fn(&Request<B>) -> Option<K> + Clone + Send + Sync + 'static,
    K: AsRef<[u8]>,
{
    type Key = K;

    fn extract(&self, request: &Request<B>) -> Option<K> {
        self(request)
    }
}

/// How [`ClientAddress`] finds the TCP peer of a request, for stacks that
/// keep it somewhere else than where it looks by default.
pub type PeerFn = fn(&http::Extensions) -> Option<IpAddr>;

/// The key of the client's IP address, as
/// [`ratekeeper::http::client_address`] finds it: the TCP peer, then —
/// only while the hop is one of the [`TrustedProxies`] — the hops before it
/// named by `Forwarded` (preferred) or `X-Forwarded-For`. An untrusted
/// peer's forwarding headers are ignored, so a client cannot choose its
/// own key by sending them.
///
/// The peer is read from the request's extensions: axum's
/// `ConnectInfo<SocketAddr>` (with the crate's `axum` feature; serve the
/// app with `into_make_service_with_connect_info::<SocketAddr>()`), else a
/// [`SocketAddr`] or an [`IpAddr`] extension (what a hyper server loop
/// inserts itself). Elsewhere (tonic's `TcpConnectInfo`, a Unix socket's
/// credentials), say where with [`peer`](Self::peer). A request whose
/// peer is not found has no key: by default it is admitted without a check
/// ([`NoKey::Admit`](crate::NoKey)), so a server that forgets to record
/// the peer limits nothing — a test of the limit finds that at once.
///
/// An IPv6 client is keyed by its /56 block (its subscriber's: see
/// [`Ipv6Prefix`]; [`ipv6_prefix`](Self::ipv6_prefix) changes it, 128
/// keys each address alone). The key is [`ClientKey`]'s text
/// (`"203.0.113.7"`, `"2001:db8:0:100::/56"`; IPv4-mapped IPv6 as IPv4),
/// the same key as the other languages' middleware gives the same client
/// — except for a limiter in this process ([`KeyedCheck::LOCAL_KEYS`]),
/// which gets the address's bytes ([`ClientKey::compact`]): nothing else
/// sees its keys, and no text is formatted.
///
/// [`KeyedCheck::LOCAL_KEYS`]: crate::KeyedCheck::LOCAL_KEYS
#[derive(Clone)]
pub struct ClientAddress {
    trusted: Arc<TrustedProxies>,
    /// `None`: the default places (see `key_of`).
    peer: Option<PeerFn>,
    ipv6_prefix: Ipv6Prefix,
}

impl ClientAddress {
    /// The TCP peer is the client: forwarding headers are ignored (no
    /// trusted proxies).
    pub fn peer_only() -> Self {
        Self::trusting(TrustedProxies::none())
    }

    /// The client behind `trusted` proxies (a load balancer, a reverse
    /// proxy on the same host: `TrustedProxies::parse(["loopback"])`).
    pub fn trusting(trusted: TrustedProxies) -> Self {
        ClientAddress { trusted: Arc::new(trusted), peer: None, ipv6_prefix: Ipv6Prefix::DEFAULT }
    }

    /// Reads the TCP peer with `peer` instead of the default places.
    pub fn peer(mut self, peer: PeerFn) -> Self {
        self.peer = Some(peer);
        self
    }

    /// Keys an IPv6 client by the first `prefix` bits of its address
    /// (/56 by default; [`Ipv6Prefix::FULL`], 128, for the whole address).
    pub fn ipv6_prefix(mut self, prefix: Ipv6Prefix) -> Self {
        self.ipv6_prefix = prefix;
        self
    }

    /// The client's address for a request from `peer` with these headers.
    #[inline]
    pub fn address(&self, peer: IpAddr, headers: &http::HeaderMap) -> IpAddr {
        if self.trusted.is_empty() || !self.trusted.contains(peer) {
            // Its headers would not be read: spare the two look-ups and
            // the walk (the usual case, a server facing its clients
            // directly). ClientKey takes IPv4-mapped IPv6 as IPv4, as
            // client_address does.
            return peer;
        }
        let forwarded = header_text(headers.get(FORWARDED));
        let x_forwarded_for = header_text(headers.get(X_FORWARDED_FOR));
        client_address(peer, forwarded, x_forwarded_for, &self.trusted)
    }

    /// The client's key for a request from `peer` with these headers.
    #[inline]
    pub fn client_key(&self, peer: IpAddr, headers: &http::HeaderMap) -> ClientKey {
        if self.trusted.is_empty() {
            // No proxy to look behind (a server facing its clients
            // directly): the key made here, inlined into the request's
            // path. Made by a call (the proxies' walk kept it out of line),
            // the address went through memory, where the call's 16-byte
            // load waited on the caller's narrower stores of it.
            return ClientKey::new(peer, self.ipv6_prefix);
        }
        self.client_key_behind_proxies(peer, headers)
    }

    /// [`client_key`](Self::client_key) when proxies are trusted.
    #[inline(never)]
    fn client_key_behind_proxies(&self, peer: IpAddr, headers: &http::HeaderMap) -> ClientKey {
        ClientKey::new(self.address(peer, headers), self.ipv6_prefix)
    }
}

impl Default for ClientAddress {
    fn default() -> Self {
        Self::peer_only()
    }
}

impl fmt::Debug for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAddress")
            .field("trusted", &self.trusted)
            .field("ipv6_prefix", &self.ipv6_prefix.bits())
            .finish_non_exhaustive()
    }
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// A header's value as text; a value that is not visible ASCII is taken as
/// absent (no proxy writes one, so only a client could have sent it).
fn header_text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

impl ClientAddress {
    /// The request's key in the form `make` gives, from its peer: found
    /// by the user's [`PeerFn`], or in the default places. Each place makes
    /// its own key rather than handing an `IpAddr` on: the paths then never
    /// meet over an address in memory, which costs a stalled load.
    #[inline]
    fn key_of<B, K>(&self, request: &Request<B>, make: impl Fn(ClientKey) -> K) -> Option<K> {
        let extensions = request.extensions();
        let key = |peer: IpAddr| make(self.client_key(peer, request.headers()));
        if let Some(peer) = self.peer {
            return peer(extensions).map(key);
        }
        #[cfg(feature = "axum")]
        if let Some(info) = extensions.get::<axum::extract::ConnectInfo<SocketAddr>>() {
            return Some(key(info.0.ip()));
        }
        if let Some(addr) = extensions.get::<SocketAddr>() {
            return Some(key(addr.ip()));
        }
        extensions.get::<IpAddr>().map(|&ip| key(ip))
    }
}

impl<B> KeyExtractor<B> for ClientAddress {
    type Key = AddressKey;

    fn extract(&self, request: &Request<B>) -> Option<AddressKey> {
        self.key_of(request, AddressKey::text)
    }

    #[inline]
    fn extract_local(&self, request: &Request<B>) -> Option<AddressKey> {
        self.key_of(request, AddressKey::compact)
    }
}

/// [`ClientAddress`]'s key, on the stack: [`ClientKey`]'s text (at most 43
/// bytes: an IPv6 block and its length), or for a limiter in this process
/// its compact bytes (4, 15 or 16).
#[derive(Clone, Copy)]
pub struct AddressKey {
    key: ClientKey,
    len: u8,
    bytes: [u8; 48],
}

impl AddressKey {
    /// The key as text, the same in every language: what a limiter shared
    /// with other processes (Redis) is given.
    pub fn text(key: ClientKey) -> Self {
        let mut cursor = std::io::Cursor::new([0u8; 48]);
        // The longest text is 43 bytes, so this cannot fail.
        let _ = write!(cursor, "{key}");
        let len = cursor.position() as u8;
        AddressKey { key, len, bytes: cursor.into_inner() }
    }

    /// The address's bytes ([`ClientKey::compact`]): the key for a
    /// limiter whose keys stay in this process.
    #[inline]
    pub fn compact(key: ClientKey) -> Self {
        let (compact, len) = key.compact();
        let mut bytes = [0u8; 48];
        bytes[..16].copy_from_slice(&compact);
        AddressKey { key, len: len as u8, bytes }
    }

    /// The client's key, whichever form this is.
    pub fn client_key(&self) -> ClientKey {
        self.key
    }
}

impl AsRef<[u8]> for AddressKey {
    #[inline]
    fn as_ref(&self) -> &[u8] {
        &self.bytes[..usize::from(self.len)]
    }
}

impl fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AddressKey").field(&format_args!("{}", self.key)).finish()
    }
}

/// The client's key as text (either form).
impl fmt::Display for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.key.fmt(f)
    }
}

/// The key of one header's value (an API key, a tenant id); a request
/// without the header has none. The value's bytes are the key, so keep in
/// mind that a client chooses them: behind authentication, key by what the
/// authentication established instead (a closure reading your extension).
#[derive(Debug, Clone)]
pub struct HeaderKey(HeaderName);

impl HeaderKey {
    /// Keys requests by `name`'s value.
    pub fn new(name: HeaderName) -> Self {
        HeaderKey(name)
    }
}

impl<B> KeyExtractor<B> for HeaderKey {
    type Key = HeaderValue;

    fn extract(&self, request: &Request<B>) -> Option<HeaderValue> {
        // A clone of a HeaderValue shares its bytes: no copy.
        request.headers().get(&self.0).cloned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::{Ipv4Addr, Ipv6Addr};

    #[test]
    fn address_keys_are_the_client_keys_text_or_bytes() {
        let longest: Ipv6Addr = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".parse().unwrap();
        let prefix = |bits| Ipv6Prefix::new(bits).unwrap();
        for (ip, bits, text, bytes) in [
            (IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)), 56, "203.0.113.7", &[203, 0, 113, 7][..]),
            (IpAddr::V6("::ffff:192.0.2.1".parse().unwrap()), 56, "192.0.2.1", &[192, 0, 2, 1]),
            (
                IpAddr::V6("2001:db8::1".parse().unwrap()),
                128,
                "2001:db8::1",
                &Ipv6Addr::from_bits(0x2001_0db8 << 96 | 1).octets(),
            ),
            (
                IpAddr::V6("2001:db8:0:1ff::1".parse().unwrap()),
                56,
                "2001:db8:0:100::/56",
                &Ipv6Addr::from_bits(0x2001_0db8_0000_0100 << 64).octets()[..15],
            ),
            (IpAddr::V6(longest), 128, "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff", &[0xff; 16]),
            (
                IpAddr::V6(longest),
                127,
                "ffff:ffff:ffff:ffff:ffff:ffff:ffff:fffe/127",
                &longest.to_bits().wrapping_sub(1).to_be_bytes(),
            ),
        ] {
            let key = ClientKey::new(ip, prefix(bits));
            assert_eq!(AddressKey::text(key).as_ref(), text.as_bytes());
            assert_eq!(AddressKey::text(key).to_string(), text);
            assert_eq!(AddressKey::compact(key).as_ref(), bytes);
            assert_eq!(AddressKey::compact(key).to_string(), text);
        }
    }

    #[test]
    fn the_peer_is_found_in_a_socket_address_extension() {
        let mut request = Request::new(());
        assert!(ClientAddress::default().extract(&request).is_none());
        request.extensions_mut().insert(SocketAddr::from(([192, 0, 2, 9], 4242)));
        request.headers_mut().insert(X_FORWARDED_FOR, HeaderValue::from_static("198.51.100.1"));
        let key = ClientAddress::default().extract(&request).unwrap();
        assert_eq!(key.as_ref(), b"192.0.2.9");
        let key = ClientAddress::default().extract_local(&request).unwrap();
        assert_eq!(key.as_ref(), [192, 0, 2, 9]);
    }
}
