//! TLS on loopback: a certificate authority made for one network, the certificates its agents
//! serve (good ones for `127.0.0.1` and `localhost`, and the bad ones the TLS cases need), the
//! rustls server configuration of an agent (ALPN `h2` and `http/1.1`, so JSON-RPC, HTTP+JSON and
//! gRPC share the port as over plain HTTP), and the client configuration that trusts exactly the
//! authority (the network's own client for sub-delegation and push).
//!
//! Keys and certificates come from `rcgen` and the crypto of `rustls`' aws-lc-rs provider; no
//! cryptography is written here. Keys are made fresh for every network: nothing secret is stored.
//!
//! ```
//! use a2a_mock_agents::tls::{Authority, CertKind};
//! let ca = Authority::new().unwrap();
//! assert!(ca.pem().starts_with("-----BEGIN CERTIFICATE-----"));
//! let id = ca.issue(CertKind::Valid).unwrap();
//! let _config = id.server_config().unwrap();
//! ```

use rcgen::{
    BasicConstraints, CertificateParams, DistinguishedName, DnType, ExtendedKeyUsagePurpose, IsCa,
    Issuer, KeyPair, KeyUsagePurpose, SanType,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde::{Deserialize, Serialize};
use std::net::{IpAddr, Ipv4Addr};
use std::sync::Arc;

/// The host names every good agent certificate names (the agents' URLs use the address).
pub const CERT_HOSTS: &[&str] = &["127.0.0.1", "localhost"];

/// The only name a `wrong_host` certificate carries (a name nothing resolves or connects to).
pub const WRONG_HOST: &str = "wrong-host.a2a-harness.invalid";

/// The first byte of a TLS record carrying a handshake: how a listener tells a TLS client from
/// a plain HTTP one on the same port.
pub const TLS_HANDSHAKE_BYTE: u8 = 0x16;

/// The ALPN protocols an agent offers: HTTP/2 (gRPC needs it) and HTTP/1.1.
pub const SERVER_ALPN: &[&[u8]] = &[b"h2", b"http/1.1"];

/// What went wrong building TLS material.
#[derive(Debug, thiserror::Error)]
pub enum TlsError {
    /// rcgen could not make a key or a certificate.
    #[error("cannot make a certificate: {0}")]
    Cert(#[from] rcgen::Error),
    /// rustls refused a configuration.
    #[error("TLS configuration: {0}")]
    Config(#[from] rustls::Error),
    /// A PEM file could not be read or held no certificate.
    #[error("{path}: {message}")]
    Pem {
        /// The file.
        path: String,
        /// What was wrong.
        message: String,
    },
}

/// Which certificate an agent serves over TLS.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum CertKind {
    /// Issued by the network's authority for `127.0.0.1` and `localhost`, valid now.
    #[default]
    Valid,
    /// For `127.0.0.1` and `localhost`, valid now, but issued by an authority made for this
    /// agent alone, which nobody is told to trust.
    UnknownAuthority,
    /// Issued by the network's authority for `127.0.0.1` and `localhost`, but expired (valid
    /// from 30 to 2 days ago).
    Expired,
    /// Issued by the network's authority, valid now, for another host name only
    /// ([`WRONG_HOST`]).
    WrongHost,
}

/// The scheme an agent's card gives its interfaces when the agent serves TLS.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum InterfaceScheme {
    /// `https://` (gRPC: `https://127.0.0.1:PORT`).
    #[default]
    Https,
    /// Plain `http://` (gRPC: `127.0.0.1:PORT`) while the card itself is served over HTTPS:
    /// the port then also serves plain HTTP, so a client that follows the card is journaled.
    Http,
}

/// An agent's TLS settings (`[agent.tls]`): serving it makes the agent's URLs `https://`.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(deny_unknown_fields, default)]
pub struct AgentTls {
    /// The certificate served (default `valid`).
    pub certificate: CertKind,
    /// The scheme of the card's interface URLs (default `https`).
    pub interfaces: InterfaceScheme,
}

/// A certificate authority made for one network: a fresh P-256 key and a self-signed CA
/// certificate valid from a day ago for a year.
pub struct Authority {
    key: KeyPair,
    params: CertificateParams,
    der: CertificateDer<'static>,
    pem: String,
}

impl std::fmt::Debug for Authority {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Authority").finish_non_exhaustive()
    }
}

fn days(n: i64) -> time::Duration {
    time::Duration::days(n)
}

impl Authority {
    /// A new authority (named `a2a-harness test CA` in its subject).
    pub fn new() -> Result<Self, TlsError> {
        Self::named("a2a-harness test CA")
    }

    fn named(name: &str) -> Result<Self, TlsError> {
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, name);
        params.distinguished_name = dn;
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let now = time::OffsetDateTime::now_utc();
        params.not_before = now - days(1);
        params.not_after = now + days(365);
        let cert = params.self_signed(&key)?;
        Ok(Authority {
            der: cert.der().clone(),
            pem: cert.pem(),
            key,
            params,
        })
    }

    /// The authority's certificate, PEM: what a client is told to trust.
    pub fn pem(&self) -> &str {
        &self.pem
    }

    /// The authority's certificate, DER.
    pub fn der(&self) -> &CertificateDer<'static> {
        &self.der
    }

    /// A server certificate of kind `kind` with its key. `UnknownAuthority` is issued by a
    /// throw-away authority, not by this one.
    pub fn issue(&self, kind: CertKind) -> Result<Identity, TlsError> {
        if kind == CertKind::UnknownAuthority {
            let stranger = Authority::named("a2a-harness unknown CA")?;
            return stranger.issue(CertKind::Valid);
        }
        let key = KeyPair::generate()?;
        let mut params = CertificateParams::default();
        let mut dn = DistinguishedName::new();
        dn.push(DnType::CommonName, "a2a mock agent");
        params.distinguished_name = dn;
        params.subject_alt_names = match kind {
            CertKind::WrongHost => vec![SanType::DnsName(WRONG_HOST.try_into()?)],
            _ => vec![
                SanType::IpAddress(IpAddr::V4(Ipv4Addr::LOCALHOST)),
                SanType::DnsName("localhost".try_into()?),
            ],
        };
        params.key_usages = vec![KeyUsagePurpose::DigitalSignature];
        params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
        let now = time::OffsetDateTime::now_utc();
        (params.not_before, params.not_after) = match kind {
            CertKind::Expired => (now - days(30), now - days(2)),
            _ => (now - days(1), now + days(30)),
        };
        let issuer = Issuer::from_params(&self.params, &self.key);
        let cert = params.signed_by(&key, &issuer)?;
        Ok(Identity {
            chain: vec![cert.der().clone(), self.der.clone()],
            key: PrivatePkcs8KeyDer::from(key.serialize_der()).into(),
        })
    }
}

/// A server's certificate chain (leaf first) and private key.
pub struct Identity {
    chain: Vec<CertificateDer<'static>>,
    key: PrivateKeyDer<'static>,
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("chain", &self.chain.len())
            .finish_non_exhaustive()
    }
}

/// The crypto provider every configuration here uses (the one reqwest already brings).
pub fn provider() -> Arc<rustls::crypto::CryptoProvider> {
    Arc::new(rustls::crypto::aws_lc_rs::default_provider())
}

impl Identity {
    /// The certificate chain, leaf first.
    pub fn chain(&self) -> &[CertificateDer<'static>] {
        &self.chain
    }

    /// A rustls server configuration serving this identity: TLS 1.3 and 1.2, no client
    /// certificates, ALPN [`SERVER_ALPN`].
    pub fn server_config(&self) -> Result<Arc<rustls::ServerConfig>, TlsError> {
        let mut cfg = rustls::ServerConfig::builder_with_provider(provider())
            .with_safe_default_protocol_versions()?
            .with_no_client_auth()
            .with_single_cert(self.chain.clone(), self.key.clone_key())?;
        cfg.alpn_protocols = SERVER_ALPN.iter().map(|p| p.to_vec()).collect();
        Ok(Arc::new(cfg))
    }
}

/// A client configuration trusting exactly `roots` (no system roots), ALPN `alpn`.
pub fn client_config(
    roots: &[CertificateDer<'static>],
    alpn: &[&[u8]],
) -> Result<rustls::ClientConfig, TlsError> {
    let mut store = rustls::RootCertStore::empty();
    for r in roots {
        store.add(r.clone())?;
    }
    let mut cfg = rustls::ClientConfig::builder_with_provider(provider())
        .with_safe_default_protocol_versions()?
        .with_root_certificates(store)
        .with_no_client_auth();
    cfg.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    Ok(cfg)
}

/// The certificates of a PEM file (at least one).
pub fn read_pem_certs(path: &std::path::Path) -> Result<Vec<CertificateDer<'static>>, TlsError> {
    use rustls::pki_types::pem::PemObject;
    let err = |message: String| TlsError::Pem {
        path: path.display().to_string(),
        message,
    };
    let certs = CertificateDer::pem_file_iter(path)
        .map_err(|e| err(e.to_string()))?
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| err(e.to_string()))?;
    if certs.is_empty() {
        return Err(err("no CERTIFICATE in the file".into()));
    }
    Ok(certs)
}

/// The TLS side of one agent's listener.
#[derive(Clone)]
pub struct ServerTls {
    /// The configuration (certificate and ALPN).
    pub config: Arc<rustls::ServerConfig>,
    /// Plain HTTP is served too on the port (an agent whose card lists `http://` interfaces);
    /// else a plain connection is journaled and closed.
    pub plaintext: bool,
}

/// The name of a negotiated protocol version, as the journal records it.
pub fn version_name(v: Option<rustls::ProtocolVersion>) -> Option<String> {
    v.map(|v| match v {
        rustls::ProtocolVersion::TLSv1_3 => "TLSv1.3".to_string(),
        rustls::ProtocolVersion::TLSv1_2 => "TLSv1.2".to_string(),
        other => format!("{other:?}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustls::pki_types::{ServerName, UnixTime};

    fn verify(ca: &Authority, id: &Identity, host: &str) -> Result<(), rustls::Error> {
        let mut store = rustls::RootCertStore::empty();
        store.add(ca.der().clone()).unwrap();
        let v = rustls::client::WebPkiServerVerifier::builder_with_provider(
            Arc::new(store),
            provider(),
        )
        .build()
        .unwrap();
        v.verify_server_cert(
            &id.chain()[0],
            &id.chain()[1..],
            &ServerName::try_from(host.to_string()).unwrap(),
            &[],
            UnixTime::now(),
        )
        .map(|_| ())
    }

    use rustls::client::danger::ServerCertVerifier;

    #[test]
    fn a_valid_certificate_verifies_for_the_address_and_localhost() {
        let ca = Authority::new().unwrap();
        let id = ca.issue(CertKind::Valid).unwrap();
        verify(&ca, &id, "127.0.0.1").unwrap();
        verify(&ca, &id, "localhost").unwrap();
        assert!(verify(&ca, &id, "127.0.0.2").is_err());
    }

    #[test]
    fn each_bad_certificate_fails_verification_for_its_reason() {
        let ca = Authority::new().unwrap();
        let e = verify(&ca, &ca.issue(CertKind::Expired).unwrap(), "127.0.0.1").unwrap_err();
        assert!(format!("{e:?}").contains("Expired"), "{e:?}");
        let e = verify(&ca, &ca.issue(CertKind::WrongHost).unwrap(), "127.0.0.1").unwrap_err();
        assert!(format!("{e:?}").contains("NotValidForName"), "{e:?}");
        let e = verify(
            &ca,
            &ca.issue(CertKind::UnknownAuthority).unwrap(),
            "127.0.0.1",
        )
        .unwrap_err();
        assert!(format!("{e:?}").contains("UnknownIssuer"), "{e:?}");
    }
}
