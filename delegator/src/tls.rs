//! TLS to the agents (`init.tls_roots`): the delegator trusts exactly the certificate
//! authorities of that PEM file (no system roots), verifies every agent's certificate with
//! rustls's WebPKI verifier (chain to a trusted root, validity period, the host name or address
//! of the URL: A2A §7.2), prefers TLS 1.3, and never falls back to plain HTTP (§7.1): with roots
//! given, the HTTP client is HTTPS-only and an interface whose URL is not `https://` is not used.
//!
//! One [`Trust`] makes both clients: reqwest's (JSON-RPC, HTTP+JSON, cards, artifact fetches;
//! ALPN `http/1.1`) and the gRPC channels' (ALPN `h2`, through [`GrpcTlsConnector`]).

use crate::bugs::{Bug, Bugs};
use rustls::DigitallySignedStruct;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use std::future::Future;
use std::path::Path;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

/// The trust roots could not be used.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// The PEM file could not be read or parsed.
    #[error("tls_roots {path}: {message}")]
    Roots {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
    /// rustls refused the configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
}

/// The certificate authorities to trust and how to verify agents' certificates.
#[derive(Debug, Clone)]
pub struct Trust {
    verifier: Arc<Verifier>,
    versions: &'static [&'static rustls::SupportedProtocolVersion],
    /// Planted bugs in force.
    bugs: Bugs,
}

impl Trust {
    /// Trust exactly the certificates of the PEM file at `path` (at least one).
    pub fn from_pem_file(path: &Path, bugs: Bugs) -> Result<Trust, TlsError> {
        let fail = |message: String| TlsError::Roots {
            path: path.display().to_string(),
            message,
        };
        let certs = CertificateDer::pem_file_iter(path)
            .map_err(|e| fail(e.to_string()))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| fail(e.to_string()))?;
        if certs.is_empty() {
            return Err(fail("no CERTIFICATE in the file".into()));
        }
        let mut roots = rustls::RootCertStore::empty();
        for c in certs {
            roots
                .add(c)
                .map_err(|e| fail(format!("not a usable CA certificate: {e}")))?;
        }
        let inner = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(roots),
            provider(),
        )
        .build()
        .map_err(|e| fail(e.to_string()))?;
        let versions: &'static [&'static rustls::SupportedProtocolVersion] =
            if bugs.has(Bug::Tls12Only) {
                TLS12_ONLY
            } else {
                rustls::DEFAULT_VERSIONS
            };
        Ok(Trust {
            verifier: Arc::new(Verifier { inner, bugs }),
            versions,
            bugs,
        })
    }

    /// A client configuration verifying with these roots and offering `alpn`.
    pub fn client_config(&self, alpn: &[&[u8]]) -> Result<rustls::ClientConfig, TlsError> {
        let mut cfg = rustls::ClientConfig::builder_with_provider(provider())
            .with_protocol_versions(self.versions)?
            .dangerous()
            .with_custom_certificate_verifier(self.verifier.clone())
            .with_no_client_auth();
        cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        Ok(cfg)
    }

    /// True when plain `http://` interfaces of an agent whose card came over HTTPS may be used
    /// (never, but for the planted bug `https-downgrade`).
    pub fn allows_plain_http(&self) -> bool {
        self.bugs.has(Bug::HttpsDowngrade)
    }
}

/// TLS 1.2 alone (planted bug `tls12-only`).
static TLS12_ONLY: &[&rustls::SupportedProtocolVersion] = &[&rustls::version::TLS12];

/// The crypto provider (aws-lc-rs, the one reqwest's rustls already uses).
fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

/// rustls's WebPKI verifier; the planted bug `accept-any-certificate` accepts whatever it
/// refuses.
#[derive(Debug)]
struct Verifier {
    inner: Arc<rustls::client::WebPkiServerVerifier>,
    bugs: Bugs,
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match self.inner.verify_server_cert(
            end_entity,
            intermediates,
            server_name,
            ocsp_response,
            now,
        ) {
            Err(rustls::Error::InvalidCertificate(_))
                if self.bugs.has(Bug::AcceptAnyCertificate) =>
            {
                Ok(ServerCertVerified::assertion())
            }
            r => r,
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls12_signature(message, cert, dss)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        self.inner.verify_tls13_signature(message, cert, dss)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.inner.supported_verify_schemes()
    }
}

/// How long a gRPC connection may take to connect and finish its handshake.
const GRPC_CONNECT: Duration = Duration::from_secs(5);

/// The gRPC channels' connector over TLS: TCP to the URI's host and port, then a rustls
/// handshake (ALPN `h2`) verified with the [`Trust`]. A URI that is not `https://` is refused
/// before connecting: no plaintext fallback.
#[derive(Clone)]
pub struct GrpcTlsConnector {
    config: Arc<rustls::ClientConfig>,
    plain_allowed: bool,
}

impl std::fmt::Debug for GrpcTlsConnector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GrpcTlsConnector")
            .field("plain_allowed", &self.plain_allowed)
            .finish_non_exhaustive()
    }
}

impl GrpcTlsConnector {
    /// A connector trusting `trust`.
    pub fn new(trust: &Trust) -> Result<Self, TlsError> {
        Ok(GrpcTlsConnector {
            config: Arc::new(trust.client_config(&[b"h2"])?),
            plain_allowed: trust.allows_plain_http(),
        })
    }
}

/// A gRPC connection: TLS, or (planted bug `https-downgrade` only) plain TCP.
pub enum GrpcStream {
    /// TLS over TCP.
    Tls(Box<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>),
    /// Plain TCP.
    Plain(tokio::net::TcpStream),
}

impl tokio::io::AsyncRead for GrpcStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut tokio::io::ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            GrpcStream::Tls(s) => Pin::new(s.as_mut()).poll_read(cx, buf),
            GrpcStream::Plain(s) => Pin::new(s).poll_read(cx, buf),
        }
    }
}

impl tokio::io::AsyncWrite for GrpcStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        match self.get_mut() {
            GrpcStream::Tls(s) => Pin::new(s.as_mut()).poll_write(cx, buf),
            GrpcStream::Plain(s) => Pin::new(s).poll_write(cx, buf),
        }
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            GrpcStream::Tls(s) => Pin::new(s.as_mut()).poll_flush(cx),
            GrpcStream::Plain(s) => Pin::new(s).poll_flush(cx),
        }
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        match self.get_mut() {
            GrpcStream::Tls(s) => Pin::new(s.as_mut()).poll_shutdown(cx),
            GrpcStream::Plain(s) => Pin::new(s).poll_shutdown(cx),
        }
    }
}

impl tonic::codegen::Service<http::Uri> for GrpcTlsConnector {
    type Response = hyper_util::rt::TokioIo<GrpcStream>;
    type Error = std::io::Error;
    type Future =
        Pin<Box<dyn Future<Output = Result<Self::Response, std::io::Error>> + Send + 'static>>;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<Result<(), Self::Error>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, uri: http::Uri) -> Self::Future {
        let config = self.config.clone();
        let plain_allowed = self.plain_allowed;
        Box::pin(async move {
            let err = |m: String| std::io::Error::other(m);
            let https = uri.scheme_str() == Some("https");
            if !https && !plain_allowed {
                return Err(err(format!(
                    "{uri}: not https (TLS is required: init.tls_roots); not connecting"
                )));
            }
            let host = uri
                .host()
                .ok_or_else(|| err(format!("{uri}: no host")))?
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_string();
            let port = uri.port_u16().unwrap_or(if https { 443 } else { 80 });
            let connect = async {
                let err = |m: String| std::io::Error::other(m);
                let tcp = tokio::net::TcpStream::connect((host.as_str(), port)).await?;
                let _ = tcp.set_nodelay(true);
                if !https {
                    return Ok::<_, std::io::Error>(GrpcStream::Plain(tcp));
                }
                let name =
                    ServerName::try_from(host.clone()).map_err(|e| err(format!("{uri}: {e}")))?;
                let tls = tokio_rustls::TlsConnector::from(config)
                    .connect(name, tcp)
                    .await?;
                Ok(GrpcStream::Tls(Box::new(tls)))
            };
            let stream = tokio::time::timeout(GRPC_CONNECT, connect)
                .await
                .map_err(|_| err(format!("{uri}: no TLS connection in time")))??;
            Ok(hyper_util::rt::TokioIo::new(stream))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_without_certificates_is_refused_naming_it() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("roots.pem");
        std::fs::write(&p, "not a pem").unwrap();
        let e = Trust::from_pem_file(&p, Bugs::none()).unwrap_err();
        assert!(e.to_string().contains("roots.pem"), "{e}");
        let e = Trust::from_pem_file(&dir.path().join("missing.pem"), Bugs::none()).unwrap_err();
        assert!(e.to_string().contains("missing.pem"), "{e}");
    }
}
