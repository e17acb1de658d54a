//! Which key a request is limited under: the [`KeyExtractor`] trait, the
//! client's address ([`ClientAddress`], the default), a header's value
//! ([`HeaderKey`]), or any closure `Fn(&Request<B>) -> Option<K>`.

use std::fmt;
use std::io::Write as _;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;

use http::header::{HeaderName, FORWARDED};
use http::{HeaderValue, Request};
use ratekeeper::http::{client_address, TrustedProxies};

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
/// The key is the address as text (`"203.0.113.7"`, `"2001:db8::1"`;
/// IPv4-mapped IPv6 as IPv4), formatted on the stack: the same key as the
/// other languages' middleware gives the same client.
#[derive(Clone)]
pub struct ClientAddress {
    trusted: Arc<TrustedProxies>,
    peer: PeerFn,
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
        ClientAddress { trusted: Arc::new(trusted), peer: default_peer }
    }

    /// Reads the TCP peer with `peer` instead of the default places.
    pub fn peer(mut self, peer: PeerFn) -> Self {
        self.peer = peer;
        self
    }

    /// The client's address for a request from `peer` with these headers.
    pub fn address(&self, peer: IpAddr, headers: &http::HeaderMap) -> IpAddr {
        if self.trusted.is_empty() || !self.trusted.contains(peer) {
            // Its headers would not be read: spare the two look-ups and
            // the walk (the usual case, a server facing its clients
            // directly). The peer is the client, IPv4-mapped IPv6 as IPv4
            // as client_address gives it.
            return match peer {
                IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(peer, IpAddr::V4),
                v4 => v4,
            };
        }
        let forwarded = header_text(headers.get(FORWARDED));
        let x_forwarded_for = header_text(headers.get(X_FORWARDED_FOR));
        client_address(peer, forwarded, x_forwarded_for, &self.trusted)
    }
}

impl Default for ClientAddress {
    fn default() -> Self {
        Self::peer_only()
    }
}

impl fmt::Debug for ClientAddress {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientAddress").field("trusted", &self.trusted).finish_non_exhaustive()
    }
}

const X_FORWARDED_FOR: HeaderName = HeaderName::from_static("x-forwarded-for");

/// A header's value as text; a value that is not visible ASCII is taken as
/// absent (no proxy writes one, so only a client could have sent it).
fn header_text(value: Option<&HeaderValue>) -> Option<&str> {
    value.and_then(|v| v.to_str().ok())
}

fn default_peer(extensions: &http::Extensions) -> Option<IpAddr> {
    #[cfg(feature = "axum")]
    if let Some(info) = extensions.get::<axum::extract::ConnectInfo<SocketAddr>>() {
        return Some(info.0.ip());
    }
    if let Some(addr) = extensions.get::<SocketAddr>() {
        return Some(addr.ip());
    }
    extensions.get::<IpAddr>().copied()
}

impl<B> KeyExtractor<B> for ClientAddress {
    type Key = AddressKey;

    fn extract(&self, request: &Request<B>) -> Option<AddressKey> {
        let peer = (self.peer)(request.extensions())?;
        Some(AddressKey::new(self.address(peer, request.headers())))
    }
}

/// An IP address as text, on the stack (at most 45 bytes: a full IPv6
/// address with an IPv4 tail), as [`ClientAddress`]'s key.
#[derive(Clone, Copy)]
pub struct AddressKey {
    len: u8,
    text: [u8; 45],
}

impl AddressKey {
    /// `ip` as text; IPv4-mapped IPv6 (`::ffff:a.b.c.d`) as IPv4, so a
    /// dual-stack listener gives an IPv4 client the key an IPv4 listener
    /// would.
    pub fn new(ip: IpAddr) -> Self {
        let ip = match ip {
            IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
            v4 => v4,
        };
        let mut text = [0u8; 45];
        let len = match ip {
            // Most clients: the dotted quad by hand, without the
            // formatting machinery (a third of the layer's own cost).
            IpAddr::V4(v4) => {
                let mut len = 0;
                for (i, octet) in v4.octets().into_iter().enumerate() {
                    if i > 0 {
                        text[len] = b'.';
                        len += 1;
                    }
                    if octet >= 100 {
                        text[len] = b'0' + octet / 100;
                        len += 1;
                    }
                    if octet >= 10 {
                        text[len] = b'0' + octet / 10 % 10;
                        len += 1;
                    }
                    text[len] = b'0' + octet % 10;
                    len += 1;
                }
                len
            }
            IpAddr::V6(_) => {
                let mut cursor = std::io::Cursor::new(&mut text[..]);
                // The longest address is 45 bytes, so this cannot fail.
                let _ = write!(cursor, "{ip}");
                cursor.position() as usize
            }
        };
        AddressKey { len: len as u8, text }
    }

    /// The text.
    pub fn as_str(&self) -> &str {
        // Only `write!` of an address, ASCII, filled the buffer.
        std::str::from_utf8(&self.text[..usize::from(self.len)]).unwrap_or_default()
    }
}

impl AsRef<[u8]> for AddressKey {
    fn as_ref(&self) -> &[u8] {
        &self.text[..usize::from(self.len)]
    }
}

impl fmt::Debug for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("AddressKey").field(&self.as_str()).finish()
    }
}

impl fmt::Display for AddressKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
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
    fn address_keys_are_the_addresses_text() {
        let longest: Ipv6Addr = "ffff:ffff:ffff:ffff:ffff:ffff:255.255.255.255".parse().unwrap();
        for (ip, text) in [
            (IpAddr::V4(Ipv4Addr::new(203, 0, 113, 7)), "203.0.113.7"),
            (IpAddr::V4(Ipv4Addr::new(0, 9, 10, 255)), "0.9.10.255"),
            (IpAddr::V4(Ipv4Addr::new(100, 101, 199, 250)), "100.101.199.250"),
            (IpAddr::V6("2001:db8::1".parse().unwrap()), "2001:db8::1"),
            (IpAddr::V6("::ffff:192.0.2.1".parse().unwrap()), "192.0.2.1"),
            (IpAddr::V6(longest), "ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff"),
        ] {
            let key = AddressKey::new(ip);
            assert_eq!(key.as_str(), text);
            assert_eq!(key.as_ref(), text.as_bytes());
        }
    }

    #[test]
    fn the_peer_is_found_in_a_socket_address_extension() {
        let mut request = Request::new(());
        assert!(ClientAddress::default().extract(&request).is_none());
        request.extensions_mut().insert(SocketAddr::from(([192, 0, 2, 9], 4242)));
        request.headers_mut().insert(X_FORWARDED_FOR, HeaderValue::from_static("198.51.100.1"));
        let key = ClientAddress::default().extract(&request).unwrap();
        assert_eq!(key.as_str(), "192.0.2.9");
    }
}
