//! HTTPS for an MCP server exposed directly: a certificate chain and key in PEM, served by
//! rustls with the `ring` provider (TLS 1.2 and 1.3, HTTP/1.1 by ALPN).

use std::fmt;
use std::path::Path;
use std::sync::Arc;

use tokio_rustls::rustls;
use tokio_rustls::rustls::pki_types::pem::PemObject;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};

use super::http_options::{HttpOptionsError, HttpOptionsErrorKind};

/// A server's TLS certificate chain and private key, ready to serve HTTPS with
/// [`HttpOptions::tls`](super::HttpOptions::tls).
///
/// ```
/// use xcsh::mcp::{HttpOptionsErrorKind, TlsIdentity};
/// let err = TlsIdentity::from_pem(b"not a certificate", b"not a key").unwrap_err();
/// assert_eq!(err.kind(), HttpOptionsErrorKind::Tls);
/// assert!(err.to_string().contains("BEGIN CERTIFICATE"));
/// ```
#[derive(Clone)]
pub struct TlsIdentity {
    pub(crate) config: Arc<rustls::ServerConfig>,
}

impl fmt::Debug for TlsIdentity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsIdentity").finish_non_exhaustive()
    }
}

impl TlsIdentity {
    /// Reads the certificate chain (`cert`: PEM, the server's certificate first, then any
    /// intermediates) and its private key (`key`: PEM, PKCS#8, PKCS#1 or SEC1), e.g. a
    /// Let's Encrypt `fullchain.pem` and `privkey.pem`.
    ///
    /// ```
    /// use xcsh::mcp::TlsIdentity;
    /// let err = TlsIdentity::from_pem_files("/nonexistent/cert.pem", "/nonexistent/key.pem").unwrap_err();
    /// assert!(err.to_string().contains("/nonexistent/cert.pem"));
    /// ```
    pub fn from_pem_files(
        cert: impl AsRef<Path>,
        key: impl AsRef<Path>,
    ) -> Result<TlsIdentity, HttpOptionsError> {
        let read = |path: &Path, what: &str| {
            std::fs::read(path).map_err(|e| {
                tls_error(format!(
                    "cannot read the TLS {what} `{}`: {e}",
                    path.display()
                ))
            })
        };
        let (cert, key) = (cert.as_ref(), key.as_ref());
        Self::build(
            &read(cert, "certificate")?,
            &read(key, "key")?,
            &format!("`{}`", cert.display()),
            &format!("`{}`", key.display()),
        )
    }

    /// [`from_pem_files`](Self::from_pem_files) from the files' contents.
    ///
    /// ```
    /// use xcsh::mcp::TlsIdentity;
    /// let cert = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";
    /// let err = TlsIdentity::from_pem(cert, b"").unwrap_err();
    /// assert!(err.to_string().contains("no private key"), "{err}");
    /// ```
    pub fn from_pem(cert: &[u8], key: &[u8]) -> Result<TlsIdentity, HttpOptionsError> {
        Self::build(cert, key, "the certificate PEM", "the key PEM")
    }

    fn build(
        cert: &[u8],
        key: &[u8],
        cert_name: &str,
        key_name: &str,
    ) -> Result<TlsIdentity, HttpOptionsError> {
        let chain = CertificateDer::pem_slice_iter(cert)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tls_error(format!("{cert_name} cannot be read as PEM: {e}")))?;
        if chain.is_empty() {
            return Err(tls_error(format!(
                "{cert_name} holds no certificate: expected PEM blocks `-----BEGIN CERTIFICATE-----`, the server's certificate first"
            )));
        }
        let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| {
            tls_error(format!(
                "{key_name} holds no private key ({e}): expected a PEM block `-----BEGIN PRIVATE KEY-----` (or `RSA PRIVATE KEY`, `EC PRIVATE KEY`)"
            ))
        })?;
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| tls_error(format!("TLS cannot be set up: {e}")))?
            .with_no_client_auth()
            .with_single_cert(chain, key)
            .map_err(|e| {
                tls_error(format!(
                    "{cert_name} and {key_name} cannot serve TLS together: {e}; check that the key is the certificate's own"
                ))
            })?;
        // The server speaks HTTP/1.1 only.
        config.alpn_protocols = vec![b"http/1.1".to_vec()];
        Ok(TlsIdentity {
            config: Arc::new(config),
        })
    }

    pub(crate) fn acceptor(&self) -> tokio_rustls::TlsAcceptor {
        tokio_rustls::TlsAcceptor::from(Arc::clone(&self.config))
    }
}

fn tls_error(message: String) -> HttpOptionsError {
    HttpOptionsError::new(HttpOptionsErrorKind::Tls, message)
}
