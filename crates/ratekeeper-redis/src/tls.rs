//! [`TlsOptions`] and [`Pem`]: how a store speaks TLS to Redis.
//!
//! A `rediss://` URL alone gives TLS with the system's roots and the URL's
//! host as the name the server's certificate must carry; [`TlsOptions`]
//! (in [`StoreOptions::tls`](crate::StoreOptions::tls)) gives TLS whatever
//! the URL's scheme, with a CA of the caller's, a client certificate for
//! mutual TLS, another name to check, or no verification at all.

use std::fmt;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Once;

use redis::io::AsyncDNSResolver;
use redis::{AsyncConnectionConfig, ConnectionAddr, ConnectionInfo, IntoConnectionInfo};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use rustls::{AlertDescription, CertificateError};

use crate::error::Error;
use crate::store::StoreOptions;

/// TLS settings of a store. `Default` is TLS with the system's roots, no
/// client certificate, and the URL's host as the server's name.
#[derive(Clone, Default)]
pub struct TlsOptions {
    /// The certificates to trust (one or more, PEM). `None`: the system's
    /// roots.
    pub ca: Option<Pem>,
    /// The client's certificate chain (PEM), for servers that require
    /// mutual TLS (`tls-auth-clients yes`). Given with
    /// [`client_key`](Self::client_key), or not at all.
    pub client_cert: Option<Pem>,
    /// The client certificate's private key (PEM: PKCS #8, PKCS #1 or SEC1).
    pub client_key: Option<Pem>,
    /// The name the server's certificate must carry, and the one sent in
    /// SNI, when it is not the URL's host (connecting by IP address, or
    /// through a tunnel): the store connects to the URL's host and checks
    /// this name. `None`: the URL's host. Such a store's blocking calls go
    /// through its multiplexed connection too (see
    /// [`RedisStore::connect`](crate::RedisStore::connect)); a cluster
    /// refuses it ([`Error::Unsupported`]).
    pub server_name: Option<String>,
    /// Encrypt, but verify nothing: any certificate, from anyone, for any
    /// name, expired or not, is accepted. Protects against a passive
    /// eavesdropper only — anyone who can intercept the connection can
    /// read and change it. For tests, never for production.
    pub insecure_skip_verify: bool,
}

/// PEM text: a file to read when the store connects, or the text itself.
#[derive(Clone, PartialEq, Eq)]
pub enum Pem {
    /// A file holding PEM text.
    File(PathBuf),
    /// PEM text.
    Bytes(Vec<u8>),
}

impl Pem {
    /// The PEM text (the file's contents, read now), or [`Error::Tls`]
    /// naming the file that could not be read and why. `what` names the
    /// setting ("CA", "client certificate", "client key").
    pub(crate) fn read(&self, what: &str) -> Result<Vec<u8>, Error> {
        match self {
            Pem::Bytes(bytes) => Ok(bytes.clone()),
            Pem::File(path) => std::fs::read(path)
                .map_err(|e| Error::Tls(format!("cannot read the TLS {what} file {}: {e}", path.display()))),
        }
    }
}

impl fmt::Debug for Pem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Pem::File(path) => f.debug_tuple("File").field(path).finish(),
            // The length only: PEM text may be a key.
            Pem::Bytes(bytes) => write!(f, "Bytes(<{} bytes>)", bytes.len()),
        }
    }
}

impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions")
            .field("ca", &self.ca)
            .field("client_cert", &self.client_cert)
            .field("client_key", &self.client_key.as_ref().map(|_| Redacted))
            .field("server_name", &self.server_name)
            .field("insecure_skip_verify", &self.insecure_skip_verify)
            .finish()
    }
}

/// What a `Debug` shows in place of a secret.
pub(crate) struct Redacted;

impl fmt::Debug for Redacted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("<redacted>")
    }
}

/// How a store reaches a server: redis-rs's client, and — when the TLS
/// [`server_name`](TlsOptions::server_name) is not the URL's host — the
/// resolver that sends that name to the URL's host (see `reconnect.rs`).
#[derive(Debug)]
pub(crate) struct Dial {
    /// The client: its host is the server name when `reroute` is given.
    pub(crate) client: redis::Client,
    pub(crate) reroute: Option<Reroute>,
}

impl Dial {
    /// `config` with the resolver, if any, that connections must use.
    pub(crate) fn config(&self, config: AsyncConnectionConfig) -> AsyncConnectionConfig {
        match &self.reroute {
            Some(reroute) => config.set_dns_resolver(reroute.clone()),
            None => config,
        }
    }
}

/// A DNS resolver that answers for the server name (the only name a
/// [`Dial`]'s client asks for) with the addresses of the URL's host: the
/// connection goes where the URL says, and the certificate is checked
/// against the server name.
#[derive(Clone, Debug)]
pub(crate) struct Reroute {
    host: String,
    port: u16,
}

impl Reroute {
    /// The URL's host.
    pub(crate) fn host(&self) -> &str {
        &self.host
    }

    /// The URL's port.
    pub(crate) fn port(&self) -> u16 {
        self.port
    }
}

impl AsyncDNSResolver for Reroute {
    fn resolve<'a, 'b: 'a>(
        &'a self,
        _server_name: &'b str,
        port: u16,
    ) -> redis::RedisFuture<'a, Box<dyn Iterator<Item = SocketAddr> + Send + 'a>> {
        Box::pin(async move {
            let addresses: Vec<SocketAddr> = tokio::net::lookup_host((self.host.as_str(), port)).await?.collect();
            Ok(Box::new(addresses.into_iter()) as Box<dyn Iterator<Item = SocketAddr> + Send>)
        })
    }
}

/// The client a store connects with: `url` with the options' credentials
/// and TLS settings applied (see [`StoreOptions`]).
pub(crate) fn client(url: &str, options: &StoreOptions) -> Result<Dial, Error> {
    let info = url.into_connection_info()?;
    let mut settings = info.redis_settings().clone();
    if let Some(username) = &options.username {
        settings = settings.set_username(username);
    }
    if let Some(password) = &options.password {
        settings = settings.set_password(password);
    }
    let info = info.set_redis_settings(settings);
    let plain = |info| Ok(Dial { client: redis::Client::open(info)?, reroute: None });
    match (info.addr().clone(), &options.tls) {
        (ConnectionAddr::TcpTls { .. }, None) => {
            install_crypto_provider();
            plain(info)
        }
        (ConnectionAddr::Tcp(host, port) | ConnectionAddr::TcpTls { host, port, .. }, Some(tls)) => {
            install_crypto_provider();
            with_tls(info, host, port, tls)
        }
        (ConnectionAddr::Unix(_), Some(_)) => {
            Err(Error::Tls("TLS needs a TCP address (redis:// or rediss://), not a Unix socket".into()))
        }
        _ => plain(info),
    }
}

/// `info` at `host:port` over TLS with `tls`'s settings.
fn with_tls(info: ConnectionInfo, host: String, port: u16, tls: &TlsOptions) -> Result<Dial, Error> {
    let (name, reroute) = match &tls.server_name {
        Some(name) => {
            ServerName::try_from(name.as_str()).map_err(|_| {
                Error::Tls(format!("the TLS server_name {name:?} is neither a DNS name nor an IP address"))
            })?;
            (name.clone(), Some(Reroute { host, port }))
        }
        None => (host, None),
    };
    let addr = ConnectionAddr::TcpTls { host: name, port, insecure: tls.insecure_skip_verify, tls_params: None };
    let info = info.set_addr(addr);
    let client = match certificates(tls)? {
        None => redis::Client::open(info)?,
        Some(certificates) => redis::Client::build_with_tls(info, certificates)
            .map_err(|e| Error::Tls(format!("unusable TLS settings: {e}")))?,
    };
    Ok(Dial { client, reroute })
}

/// The CA and client certificate of `tls`, read and checked, as redis-rs
/// takes them (for one server's client, and a cluster's); `None` when
/// neither is given.
pub(crate) fn certificates(tls: &TlsOptions) -> Result<Option<redis::TlsCertificates>, Error> {
    let root_cert = match &tls.ca {
        Some(ca) => {
            let pem = ca.read("CA")?;
            check_certificates(&pem, "CA")?;
            Some(pem)
        }
        None => None,
    };
    let client_tls = match (&tls.client_cert, &tls.client_key) {
        (None, None) => None,
        (Some(cert), Some(key)) => {
            let client_cert = cert.read("client certificate")?;
            check_certificates(&client_cert, "client certificate")?;
            let client_key = key.read("client key")?;
            PrivateKeyDer::from_pem_slice(&client_key)
                .map_err(|e| Error::Tls(format!("the TLS client key holds no usable PEM private key: {e}")))?;
            Some(redis::ClientTlsConfig { client_cert, client_key })
        }
        (Some(_), None) => return Err(Error::Tls("a TLS client certificate needs its client key too".into())),
        (None, Some(_)) => return Err(Error::Tls("a TLS client key needs its client certificate too".into())),
    };
    if root_cert.is_none() && client_tls.is_none() {
        return Ok(None);
    }
    Ok(Some(redis::TlsCertificates { client_tls, root_cert }))
}

/// Checks that `pem` holds at least one certificate, and only well-formed
/// ones: a file of something else would otherwise trust nothing, and fail
/// every handshake with a less helpful message.
fn check_certificates(pem: &[u8], what: &str) -> Result<(), Error> {
    let mut count = 0;
    for certificate in CertificateDer::pem_slice_iter(pem) {
        certificate.map_err(|e| Error::Tls(format!("the TLS {what} holds malformed PEM: {e}")))?;
        count += 1;
    }
    if count == 0 {
        return Err(Error::Tls(format!("the TLS {what} holds no PEM certificate (-----BEGIN CERTIFICATE-----)")));
    }
    Ok(())
}

/// Installs ring's cryptography as rustls's process default, once, unless
/// the process (the host application, another library) installed one
/// already: redis-rs builds its TLS configurations from the default.
pub(crate) fn install_crypto_provider() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        if rustls::crypto::CryptoProvider::get_default().is_none() {
            // Lost a race with another installer: theirs serves as well.
            let _ = rustls::crypto::ring::default_provider().install_default();
        }
    });
}

/// Why a TLS handshake failed, in words, if `error` is one that failed on
/// a certificate or on the TLS protocol itself (rather than on the
/// network): `None` for every other error.
pub(crate) fn handshake_failure(error: &redis::RedisError) -> Option<String> {
    match rustls_error(error) {
        Some(failure) => Some(format!("{} ({failure})", cause(failure))),
        None => handshake_failure_in_text(error),
    }
}

/// [`handshake_failure`] for an error that holds rustls's error as text
/// only: a cluster's failure to connect to any of its initial nodes, whose
/// detail is the last node's error written out (redis-rs 1.8). The words
/// looked for are rustls's own `Display` of its error.
fn handshake_failure_in_text(error: &redis::RedisError) -> Option<String> {
    let text = error.to_string();
    let failure = if let Some(at) = text.find("invalid peer certificate: ") {
        let what = &text[at + "invalid peer certificate: ".len()..];
        rustls::Error::InvalidCertificate(if what.starts_with("UnknownIssuer") {
            CertificateError::UnknownIssuer
        } else if what.starts_with("NotValidForName") {
            CertificateError::NotValidForName
        } else if what.starts_with("Expired") {
            CertificateError::Expired
        } else if what.starts_with("NotValidYet") {
            CertificateError::NotValidYet
        } else {
            CertificateError::BadEncoding
        })
    } else if text.contains("received fatal alert: CertificateRequired") {
        rustls::Error::AlertReceived(AlertDescription::CertificateRequired)
    } else if text.contains("received fatal alert: ") {
        rustls::Error::AlertReceived(AlertDescription::BadCertificate)
    } else {
        return None;
    };
    Some(format!("{} ({text})", cause(&failure)))
}

/// Why a handshake failed with `failure`, in words.
fn cause(failure: &rustls::Error) -> &'static str {
    match failure {
        rustls::Error::InvalidCertificate(e) => match e {
            CertificateError::UnknownIssuer => "the server's certificate is not signed by a trusted CA",
            CertificateError::NotValidForName | CertificateError::NotValidForNameContext { .. } => {
                "the server's certificate is for another name"
            }
            CertificateError::Expired | CertificateError::ExpiredContext { .. } => {
                "the server's certificate has expired"
            }
            CertificateError::NotValidYet | CertificateError::NotValidYetContext { .. } => {
                "the server's certificate is not valid yet"
            }
            _ => "the server's certificate was refused",
        },
        rustls::Error::AlertReceived(alert) => match alert {
            AlertDescription::CertificateRequired => {
                "the server requires a client certificate (tls-auth-clients), and none was given"
            }
            AlertDescription::BadCertificate
            | AlertDescription::UnknownCA
            | AlertDescription::CertificateUnknown
            | AlertDescription::UnsupportedCertificate
            | AlertDescription::CertificateExpired
            | AlertDescription::CertificateRevoked
            | AlertDescription::AccessDenied
            | AlertDescription::DecryptError => "the server refused the client certificate",
            _ => "the server ended the TLS handshake",
        },
        _ => "the TLS handshake failed (is the server speaking TLS on that port?)",
    }
}

/// The rustls error inside `error`, if any: redis-rs wraps it in an I/O
/// error, which it holds behind an `Arc`.
fn rustls_error(error: &redis::RedisError) -> Option<&rustls::Error> {
    let mut current: Option<&(dyn std::error::Error + 'static)> = Some(error);
    while let Some(e) = current {
        if let Some(found) = e.downcast_ref::<rustls::Error>() {
            return Some(found);
        }
        let inner: Option<&(dyn std::error::Error + 'static)> =
            if let Some(shared) = e.downcast_ref::<std::sync::Arc<dyn std::error::Error + Send + Sync>>() {
                Some(&**shared)
            } else if let Some(io) = e.downcast_ref::<std::io::Error>() {
                io.get_ref().map(|inner| inner as &(dyn std::error::Error + 'static))
            } else {
                None
            };
        current = inner.or_else(|| e.source());
    }
    None
}

/// Why Redis refused access, in words, if `error` is such a refusal:
/// `WRONGPASS`, `NOAUTH` or `NOPERM` from the server, or redis-rs's own
/// report of a failed `AUTH` at connection set-up.
pub(crate) fn access_refusal(error: &redis::RedisError) -> Option<String> {
    let detail = error.detail().unwrap_or("");
    match error.code() {
        Some("WRONGPASS") => Some(format!("WRONGPASS: a wrong password, or an unknown or disabled user ({detail})")),
        Some("NOAUTH") => Some(format!("NOAUTH: the server requires a password, and none was given ({detail})")),
        Some("NOPERM") => Some(format!("NOPERM: the ACL user may not run this command or touch this key ({detail})")),
        // A command of the script refused (Redis 7 reports it as an ERR,
        // naming neither the command nor NOPERM).
        _ if detail.contains("The user executing the script can't") => {
            Some(format!("NOPERM: the ACL user may not run a command or touch a key the script needs ({detail})"))
        }
        _ if error.kind() == redis::ErrorKind::AuthenticationFailed => Some(format!(
            "authentication failed: a wrong password, or an unknown or disabled user (WRONGPASS; {error})"
        )),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_no_password_and_no_key() {
        let options = StoreOptions {
            username: Some("ratekeeper".into()),
            password: Some("hunter2".into()),
            tls: Some(TlsOptions {
                ca: Some(Pem::File("/etc/ca.crt".into())),
                client_cert: Some(Pem::Bytes(b"-----BEGIN CERTIFICATE-----".to_vec())),
                client_key: Some(Pem::Bytes(b"-----BEGIN PRIVATE KEY----- secret".to_vec())),
                ..TlsOptions::default()
            }),
            ..StoreOptions::default()
        };
        let shown = format!("{options:?}");
        assert!(!shown.contains("hunter2") && !shown.contains("secret"), "{shown}");
        assert!(
            shown.contains("ratekeeper") && shown.contains("/etc/ca.crt") && shown.contains("<redacted>"),
            "{shown}"
        );
    }

    #[test]
    fn a_handshake_failure_written_out_as_text_is_still_recognised() {
        // What a cluster's client reports when no initial node connects.
        let written = |detail: &str| {
            redis::RedisError::from((
                redis::ErrorKind::Io,
                "Failed to create initial connections",
                format!("Io: {detail}"),
            ))
        };
        for (detail, expected) in [
            ("invalid peer certificate: UnknownIssuer", "not signed by a trusted CA"),
            ("invalid peer certificate: NotValidForNameContext { expected: .. }", "for another name"),
            ("invalid peer certificate: ExpiredContext { time: .. }", "has expired"),
            ("received fatal alert: CertificateRequired", "requires a client certificate"),
            ("received fatal alert: BadCertificate", "refused the client certificate"),
        ] {
            let why = handshake_failure(&written(detail)).unwrap_or_else(|| panic!("{detail}: not recognised"));
            assert!(why.contains(expected) && why.contains(detail), "{why}");
        }
        assert_eq!(handshake_failure(&written("Connection refused (os error 111)")), None);
    }

    #[test]
    fn half_a_client_pair_or_a_file_with_no_pem_is_refused_before_connecting() {
        let with = |tls: TlsOptions| {
            client("redis://127.0.0.1:1/", &StoreOptions { tls: Some(tls), ..StoreOptions::default() })
        };
        let cert = Some(Pem::Bytes(b"no".to_vec()));
        for (tls, expected) in [
            (TlsOptions { client_cert: cert.clone(), ..TlsOptions::default() }, "needs its client key"),
            (TlsOptions { client_key: cert.clone(), ..TlsOptions::default() }, "needs its client certificate"),
            (TlsOptions { ca: cert, ..TlsOptions::default() }, "holds no PEM certificate"),
            (TlsOptions { server_name: Some("not a name".into()), ..TlsOptions::default() }, "neither a DNS name"),
        ] {
            match with(tls) {
                Err(Error::Tls(why)) => assert!(why.contains(expected), "{why}"),
                other => panic!("{expected}: {other:?}"),
            }
        }
    }
}
