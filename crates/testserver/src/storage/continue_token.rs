//! List continue tokens, encoded like the real server's (base64 of
//! `{"v":"meta.k8s.io/v1","rv":N,"start":"key\u0000"}`).

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine as _;
use serde::{Deserialize, Serialize};

#[derive(Serialize, Deserialize)]
struct Token {
    v: String,
    rv: i64,
    start: String,
}

/// A decoded continue token: the list's revision (`None` for the "inconsistent" token handed out
/// with a 410, which continues at the current state) and the key to start after.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Continue {
    /// The revision of the first page.
    pub rv: Option<u64>,
    /// The last key of the previous page.
    pub after: String,
}

impl Continue {
    /// Encodes the token.
    pub(crate) fn encode(&self) -> String {
        let t = Token {
            v: "meta.k8s.io/v1".into(),
            rv: self.rv.map_or(-1, |rv| rv as i64),
            start: format!("{}\u{0}", self.after),
        };
        URL_SAFE_NO_PAD.encode(serde_json::to_vec(&t).expect("token serializes"))
    }

    /// Decodes a token; the message says what was wrong (the server answers 400 with it).
    pub(crate) fn decode(s: &str) -> Result<Self, String> {
        let raw = URL_SAFE_NO_PAD
            .decode(s.trim_end_matches('='))
            .map_err(|e| format!("continue key is not valid: {e}"))?;
        let t: Token =
            serde_json::from_slice(&raw).map_err(|e| format!("continue key is not valid: {e}"))?;
        if t.v != "meta.k8s.io/v1" {
            return Err(format!(
                "continue key is not valid: server does not recognize this encoding ({})",
                t.v
            ));
        }
        let after = t
            .start
            .strip_suffix('\u{0}')
            .unwrap_or(&t.start)
            .to_string();
        let rv = match t.rv {
            -1 => None,
            rv if rv > 0 => Some(rv as u64),
            rv => {
                return Err(format!(
                    "continue key is not valid: incorrect encoded start resourceVersion {rv}"
                ))
            }
        };
        Ok(Continue { rv, after })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_rejects_garbage() {
        let c = Continue {
            rv: Some(42),
            after: "ns/a".into(),
        };
        assert_eq!(Continue::decode(&c.encode()).unwrap(), c);
        let inconsistent = Continue {
            rv: None,
            after: "b".into(),
        };
        assert_eq!(
            Continue::decode(&inconsistent.encode()).unwrap(),
            inconsistent
        );
        assert!(Continue::decode("!!!").is_err());
        assert!(Continue::decode(&URL_SAFE_NO_PAD.encode(b"{}")).is_err());
    }
}
