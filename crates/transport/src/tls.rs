//! TLS with rustls and the ring provider: server verification (the configured CA, else the
//! system's roots; never skipped unless `insecure-skip-tls-verify`), and a client certificate
//! slot that an exec plugin can refill.

use std::sync::Arc;

use parking_lot::RwLock;
use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::ResolvesClientCert;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use rustls_pki_types::pem::PemObject;
use rustls_pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};

use crate::config::Identity;
use crate::error::ConfigError;

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

fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// The client certificate presented in handshakes; empty until set.
#[derive(Debug, Default)]
pub(crate) struct ClientCertSlot {
    key: RwLock<Option<Arc<CertifiedKey>>>,
}

impl ClientCertSlot {
    /// Presents this identity in later handshakes.
    pub(crate) fn set(&self, identity: &Identity) -> Result<(), String> {
        let signer = provider()
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
    let provider = provider();
    let builder = ClientConfig::builder_with_provider(provider.clone())
        .with_safe_default_protocol_versions()
        .map_err(|e| ConfigError::Tls(e.to_string()))?;
    let builder = if insecure {
        builder
            .dangerous()
            .with_custom_certificate_verifier(Arc::new(NoVerification(provider)))
    } else {
        let mut roots = RootCertStore::empty();
        match root_certs {
            Some(certs) => {
                for c in certs {
                    roots
                        .add(c.clone())
                        .map_err(|e| ConfigError::Tls(format!("unusable CA certificate: {e}")))?;
                }
            }
            None => {
                let native = rustls_native_certs::load_native_certs();
                roots.add_parsable_certificates(native.certs);
            }
        }
        if roots.is_empty() {
            return Err(ConfigError::Tls(
                "no trusted CA certificates (none configured and none in the system store)".into(),
            ));
        }
        builder.with_root_certificates(roots)
    };
    Ok(builder.with_client_cert_resolver(identity))
}

/// `insecure-skip-tls-verify`: any certificate is accepted, but handshake signatures are still
/// checked so the session is at least bound to the presented certificate.
#[derive(Debug)]
struct NoVerification(Arc<CryptoProvider>);

impl ServerCertVerifier for NoVerification {
    fn verify_server_cert(
        &self,
        _end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        Ok(ServerCertVerified::assertion())
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
            &self.0.signature_verification_algorithms,
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
            &self.0.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
