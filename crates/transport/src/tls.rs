//! TLS with rustls: server verification (the configured CA, else the
//! system's roots; never skipped unless `insecure-skip-tls-verify`), and a client certificate
//! slot that an exec plugin can refill.
//!
//! The system's roots are read at the first handshake that needs them, as Go reads its system
//! pool on first use: a client of an `http://` server (kcache-testserver, a local proxy) never
//! reads and parses the system's bundle (a few milliseconds of CPU at start on the machines
//! kcache is measured on).

use std::sync::{Arc, OnceLock};

use parking_lot::RwLock;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::client::WebPkiServerVerifier;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::error::ConfigError;

/// A TLS client certificate chain and its private key (the key never prints).
pub struct Identity {
    /// The certificate chain, leaf first.
    pub certs: Vec<CertificateDer<'static>>,
    /// The private key.
    pub key: PrivateKeyDer<'static>,
}

impl Clone for Identity {
    fn clone(&self) -> Self {
        Identity {
            certs: self.certs.clone(),
            key: self.key.clone_key(),
        }
    }
}

impl std::fmt::Debug for Identity {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Identity")
            .field("certs", &self.certs.len())
            .field("key", &"[redacted]")
            .finish()
    }
}

/// The certificates of a PEM bundle; an error if there are none or one is malformed.
pub(crate) fn parse_certs(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, String> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| format!("invalid PEM certificate: {e}"))?;
    if certs.is_empty() {
        return Err("no PEM certificate found".into());
    }
    Ok(certs)
}

/// The private key of a PEM file (PKCS#8, PKCS#1 or SEC1).
pub(crate) fn parse_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, String> {
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| format!("no usable PEM private key: {e}"))
}

/// The crypto provider: aws-lc-rs or ring as the crate's features choose (aws-lc-rs when both
/// are on: it was asked for beside the default), else the one the process installed with
/// rustls' `CryptoProvider::install_default`.
#[cfg(feature = "aws-lc-rs")]
fn provider() -> Result<Arc<CryptoProvider>, String> {
    Ok(Arc::new(rustls::crypto::aws_lc_rs::default_provider()))
}

#[cfg(all(feature = "ring", not(feature = "aws-lc-rs")))]
fn provider() -> Result<Arc<CryptoProvider>, String> {
    Ok(Arc::new(rustls::crypto::ring::default_provider()))
}

#[cfg(not(any(feature = "ring", feature = "aws-lc-rs")))]
fn provider() -> Result<Arc<CryptoProvider>, String> {
    CryptoProvider::get_default().cloned().ok_or_else(|| {
        "no TLS crypto provider: enable kcache-transport's `ring` or `aws-lc-rs` feature, \
         or install one with rustls' CryptoProvider::install_default"
            .to_string()
    })
}

/// The client certificate presented in handshakes; empty until set.
#[derive(Debug, Default)]
pub(crate) struct ClientCertSlot {
    key: RwLock<Option<Arc<CertifiedKey>>>,
}

impl ClientCertSlot {
    /// Presents this identity in later handshakes.
    pub(crate) fn set(&self, identity: &Identity) -> Result<(), String> {
        let signer = provider()?
            .key_provider
            .load_private_key(identity.key.clone_key())
            .map_err(|e| format!("unusable private key: {e}"))?;
        *self.key.write() = Some(Arc::new(CertifiedKey::new(identity.certs.clone(), signer)));
        Ok(())
    }
}

impl ResolvesClientCert for ClientCertSlot {
    fn resolve(&self, _hints: &[&[u8]], _schemes: &[SignatureScheme]) -> Option<Arc<CertifiedKey>> {
        self.key.read().clone()
    }

    fn has_certs(&self) -> bool {
        self.key.read().is_some()
    }
}

/// The rustls config: roots (or none, when verification is skipped) and the client cert slot.
pub(crate) fn client_config(
    root_certs: Option<&[CertificateDer<'static>]>,
    insecure: bool,
    identity: Arc<ClientCertSlot>,
) -> Result<ClientConfig, ConfigError> {
    let provider = provider().map_err(ConfigError::Tls)?;
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;
    let builder = match (insecure, root_certs) {
        (true, _) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier::new(provider, Check::Skip))),
        (false, None) => builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(Verifier::new(
                provider,
                Check::SystemRoots(OnceLock::new()),
            ))),
        (false, Some(certs)) => {
            let mut roots = RootCertStore::empty();
            for c in certs {
                roots
                    .add(c.clone())
                    .map_err(|e| ConfigError::Tls(format!("unusable CA certificate: {e}")))?;
            }
            if roots.is_empty() {
                return Err(ConfigError::Tls(
                    "no trusted CA certificates (the configured bundle holds none)".into(),
                ));
            }
            builder.with_root_certificates(roots)
        }
    };
    Ok(builder.with_client_cert_resolver(identity))
}

/// How a [`Verifier`] checks the server's certificate.
#[derive(Debug)]
enum Check {
    /// `insecure-skip-tls-verify`: any certificate is accepted, but handshake signatures are
    /// still checked so the session is at least bound to the presented certificate.
    Skip,
    /// Against the system's roots, read at the first handshake (an error if there are none).
    SystemRoots(OnceLock<Result<Arc<WebPkiServerVerifier>, String>>),
}

/// The verifier of a config without a configured CA.
#[derive(Debug)]
struct Verifier {
    provider: Arc<CryptoProvider>,
    check: Check,
}

impl Verifier {
    fn new(provider: Arc<CryptoProvider>, check: Check) -> Self {
        Verifier { provider, check }
    }

    /// The system roots' verifier, built on first use.
    fn system_roots(
        &self,
        cell: &OnceLock<Result<Arc<WebPkiServerVerifier>, String>>,
    ) -> Result<Arc<WebPkiServerVerifier>, rustls::Error> {
        cell.get_or_init(|| {
            let mut roots = RootCertStore::empty();
            roots.add_parsable_certificates(rustls_native_certs::load_native_certs().certs);
            if roots.is_empty() {
                return Err(
                    "no trusted CA certificates (none configured and none in the system store)"
                        .into(),
                );
            }
            WebPkiServerVerifier::builder_with_provider(Arc::new(roots), self.provider.clone())
                .build()
                .map_err(|e| format!("the system's CA certificates: {e}"))
        })
        .clone()
        .map_err(rustls::Error::General)
    }
}

impl ServerCertVerifier for Verifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        server_name: &ServerName<'_>,
        ocsp: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        match &self.check {
            Check::Skip => Ok(ServerCertVerified::assertion()),
            Check::SystemRoots(cell) => self.system_roots(cell)?.verify_server_cert(
                end_entity,
                intermediates,
                server_name,
                ocsp,
                now,
            ),
        }
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn system_roots_are_read_at_the_first_check_not_before() {
        let verifier = Verifier::new(provider().unwrap(), Check::SystemRoots(OnceLock::new()));
        let loaded = |v: &Verifier| match &v.check {
            Check::SystemRoots(cell) => cell.get().is_some(),
            Check::Skip => false,
        };
        assert!(!loaded(&verifier), "nothing read when built");
        let cert = rcgen::generate_simple_self_signed(vec!["localhost".to_string()])
            .unwrap()
            .cert;
        let name = ServerName::try_from("localhost").unwrap();
        let checked = verifier.verify_server_cert(cert.der(), &[], &name, &[], UnixTime::now());
        // A self-signed certificate is in no system store: refused (or, on a machine with no
        // store at all, refused for that), never accepted.
        let e = checked.unwrap_err().to_string();
        assert!(
            e.contains("UnknownIssuer") || e.contains("no trusted CA"),
            "{e}"
        );
        assert!(loaded(&verifier), "read at the first check");
    }

    #[test]
    fn rejects_bad_pem() {
        assert!(parse_certs(b"hello")
            .unwrap_err()
            .contains("no PEM certificate"));
        let broken = b"-----BEGIN CERTIFICATE-----\n!!!\n-----END CERTIFICATE-----\n";
        assert!(parse_certs(broken).is_err());
        assert!(parse_key(b"nope").is_err());
    }
}
