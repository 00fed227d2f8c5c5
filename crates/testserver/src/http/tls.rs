//! A fresh self-signed CA and a serving certificate for 127.0.0.1 and localhost (rcgen), and the
//! rustls configuration that offers h2 and http/1.1 via ALPN.

use std::sync::Arc;

use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};
use rustls_pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};

use crate::Error;

/// The generated certificates: the CA (what clients trust) and the server's TLS configuration.
pub(crate) struct Certs {
    /// The CA certificate, PEM.
    pub ca_pem: String,
    /// rustls server configuration with the serving certificate.
    pub server: Arc<rustls::ServerConfig>,
}

fn cert_err(e: rcgen::Error) -> Error {
    Error::Certificate(e.to_string())
}

/// Generates a CA and a serving certificate signed by it.
pub(crate) fn generate() -> Result<Certs, Error> {
    let mut ca_params = CertificateParams::new(Vec::<String>::new()).map_err(cert_err)?;
    ca_params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca_params
        .distinguished_name
        .push(DnType::CommonName, "kcache-testserver-ca");
    ca_params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca = CertifiedIssuer::self_signed(ca_params, KeyPair::generate().map_err(cert_err)?)
        .map_err(cert_err)?;

    let key = KeyPair::generate().map_err(cert_err)?;
    let mut params = CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
        .map_err(cert_err)?;
    params
        .distinguished_name
        .push(DnType::CommonName, "kcache-testserver");
    params.key_usages = vec![
        KeyUsagePurpose::DigitalSignature,
        KeyUsagePurpose::KeyEncipherment,
    ];
    params.extended_key_usages = vec![ExtendedKeyUsagePurpose::ServerAuth];
    let cert = params.signed_by(&key, &ca).map_err(cert_err)?;

    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut server = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| Error::Tls(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(
            vec![CertificateDer::from(cert.der().to_vec())],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .map_err(|e| Error::Tls(e.to_string()))?;
    server.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    Ok(Certs {
        ca_pem: ca.pem(),
        server: Arc::new(server),
    })
}
