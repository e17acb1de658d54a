//! [`TlsOptions`] and [`Pem`]: how a store speaks TLS to Redis.
//!
//! A `rediss://` URL alone gives TLS with the system's roots and the URL's
//! host as the name the server's certificate must carry; [`TlsOptions`]
//! (in [`StoreOptions::tls`](crate::StoreOptions::tls)) gives TLS whatever
//! the URL's scheme, with a CA of the caller's, a client certificate for
//! mutual TLS, another name to check, or no verification at all.

use std::fmt;
use std::path::PathBuf;

use crate::error::Error;

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
    /// SNI. `None`: the URL's host.
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
    #[allow(dead_code)] // Until the store reads its TLS settings.
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
