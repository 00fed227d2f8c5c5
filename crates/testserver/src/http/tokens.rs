//! Service-account tokens the server issued (TokenRequest), so that a TokenReview can tell
//! them apart from anything else. They are JWT-shaped (header, claims, signature) like the
//! API server's, but signed with nothing: only this server can vouch for them.

use std::collections::HashMap;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use parking_lot::Mutex;
use rand::Rng;
use serde_json::json;

/// The issuer and default audience, as envtest's kube-apiserver is configured.
pub(crate) const ISSUER: &str = "https://kubernetes.default.svc.cluster.local";

/// Who a token was issued to.
#[derive(Debug, Clone)]
pub(crate) struct Issued {
    pub namespace: String,
    pub name: String,
    pub uid: String,
    pub audiences: Vec<String>,
    pub expires: SystemTime,
}

/// Every token issued, by token.
#[derive(Debug, Default)]
pub(crate) struct Tokens(Mutex<HashMap<String, Issued>>);

impl Tokens {
    /// Mints a token for `who`.
    pub(crate) fn issue(&self, who: Issued) -> String {
        let secs = |t: SystemTime| {
            t.duration_since(UNIX_EPOCH)
                .unwrap_or(Duration::ZERO)
                .as_secs()
        };
        let now = SystemTime::now();
        let header = json!({"alg": "RS256", "kid": "kcache-testserver"});
        let claims = json!({"aud": who.audiences, "exp": secs(who.expires), "iat": secs(now), "iss": ISSUER,
            "kubernetes.io": {"namespace": who.namespace, "serviceaccount": {"name": who.name, "uid": who.uid}},
            "nbf": secs(now), "sub": format!("system:serviceaccount:{}:{}", who.namespace, who.name)});
        let sig: [u8; 32] = rand::rng().random();
        let token = format!(
            "{}.{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string()),
            URL_SAFE_NO_PAD.encode(sig)
        );
        self.0.lock().insert(token.clone(), who);
        token
    }

    /// Who `token` was issued to, while it has not expired.
    pub(crate) fn lookup(&self, token: &str) -> Option<Issued> {
        self.0
            .lock()
            .get(token)
            .filter(|i| i.expires > SystemTime::now())
            .cloned()
    }
}
