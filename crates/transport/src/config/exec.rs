//! Exec credential plugins (`client.authentication.k8s.io/v1` and `v1beta1`): run the
//! configured command, read the `ExecCredential` it prints, cache it until it expires.

use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde::Deserialize;

use crate::error::ConfigError;
use crate::secret::Secret;

/// The API versions of `ExecCredential` kcache speaks.
pub const EXEC_API_VERSIONS: [&str; 2] = [
    "client.authentication.k8s.io/v1",
    "client.authentication.k8s.io/v1beta1",
];

/// The `exec` section of a kubeconfig user.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ExecConfig {
    /// The program (a path containing `/` is resolved against the kubeconfig's directory).
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Option<Vec<String>>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: Option<Vec<ExecEnvVar>>,
    /// The `ExecCredential` version to request and expect.
    #[serde(default)]
    pub api_version: String,
    /// Shown when the command cannot be run.
    #[serde(default)]
    pub install_hint: Option<String>,
    /// Whether to pass the cluster's details in `KUBERNETES_EXEC_INFO`.
    #[serde(default)]
    pub provide_cluster_info: bool,
    /// `Never`, `IfAvailable` or `Always` (required by v1).
    #[serde(default)]
    pub interactive_mode: Option<String>,
}

/// One environment variable for the plugin.
#[derive(Debug, Clone, Deserialize)]
pub struct ExecEnvVar {
    /// Its name.
    pub name: String,
    /// Its value (may be a credential).
    pub value: Secret,
}

impl ExecConfig {
    /// Checks the fields kubectl checks; `field` names this config in errors.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if self.command.is_empty() {
            return Err("command: must be set".into());
        }
        if !EXEC_API_VERSIONS.contains(&self.api_version.as_str()) {
            return Err(format!(
                "apiVersion: {:?} is not supported (use one of {EXEC_API_VERSIONS:?})",
                self.api_version
            ));
        }
        match self.interactive_mode.as_deref() {
            None if self.api_version == EXEC_API_VERSIONS[0] => {
                Err("interactiveMode: must be specified for client.authentication.k8s.io/v1".into())
            }
            None | Some("Never") | Some("IfAvailable") => Ok(()),
            Some("Always") => Err(
                "interactiveMode: Always needs a terminal, and kcache never runs plugins interactively"
                    .into(),
            ),
            Some(other) => Err(format!("interactiveMode: invalid value {other:?}")),
        }
    }
}

/// What a plugin returned.
#[derive(Debug, Clone, Default)]
pub struct ExecOutput {
    /// A bearer token.
    pub token: Option<Secret>,
    /// PEM client certificate.
    pub client_certificate_data: Option<String>,
    /// PEM private key.
    pub client_key_data: Option<Secret>,
    /// When the credential stops being valid; `None`: until the server rejects it.
    pub expiration: Option<SystemTime>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredential {
    #[serde(default)]
    api_version: String,
    #[serde(default)]
    kind: String,
    status: Option<ExecCredentialStatus>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct ExecCredentialStatus {
    #[serde(default)]
    token: Option<Secret>,
    #[serde(default)]
    client_certificate_data: Option<String>,
    #[serde(default)]
    client_key_data: Option<Secret>,
    #[serde(default)]
    expiration_timestamp: Option<String>,
}

/// A plugin and its cached credential.
#[derive(Debug)]
pub(crate) struct ExecAuth {
    config: ExecConfig,
    cluster_info: Option<serde_json::Value>,
    cached: tokio::sync::Mutex<Option<Arc<ExecOutput>>>,
}

impl ExecAuth {
    pub(crate) fn new(config: ExecConfig, cluster_info: Option<serde_json::Value>) -> Self {
        ExecAuth {
            config,
            cluster_info,
            cached: tokio::sync::Mutex::new(None),
        }
    }

    /// The cached credential, or a fresh one when there is none or it has expired. Concurrent
    /// callers wait for one run of the plugin.
    pub(crate) async fn credential(&self) -> Result<Arc<ExecOutput>, ConfigError> {
        let mut cached = self.cached.lock().await;
        if let Some(c) = cached.as_ref() {
            if c.expiration.is_none_or(|t| t > SystemTime::now()) {
                return Ok(c.clone());
            }
        }
        let fresh = Arc::new(self.run().await?);
        *cached = Some(fresh.clone());
        Ok(fresh)
    }

    /// Forgets the cached credential (after the server answered 401).
    pub(crate) async fn invalidate(&self) {
        *self.cached.lock().await = None;
    }

    fn error(&self, problem: impl Into<String>) -> ConfigError {
        let mut problem = problem.into();
        if let Some(hint) = &self.config.install_hint {
            problem.push_str("; ");
            problem.push_str(hint);
        }
        ConfigError::Exec {
            command: self.config.command.clone(),
            problem,
        }
    }

    async fn run(&self) -> Result<ExecOutput, ConfigError> {
        let mut spec = serde_json::json!({"interactive": false});
        if self.config.provide_cluster_info {
            if let Some(c) = &self.cluster_info {
                spec["cluster"] = c.clone();
            }
        }
        let info = serde_json::json!({
            "apiVersion": self.config.api_version,
            "kind": "ExecCredential",
            "spec": spec,
        });
        let mut cmd = tokio::process::Command::new(&self.config.command);
        cmd.args(self.config.args.iter().flatten())
            .env("KUBERNETES_EXEC_INFO", info.to_string())
            .stdin(std::process::Stdio::null())
            .kill_on_drop(true);
        for v in self.config.env.iter().flatten() {
            cmd.env(&v.name, v.value.expose());
        }
        let out = cmd
            .output()
            .await
            .map_err(|e| self.error(format!("cannot run: {e}")))?;
        if !out.status.success() {
            return Err(self.error(format!(
                "{}: {}",
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            )));
        }
        self.parse(&out.stdout)
    }

    fn parse(&self, stdout: &[u8]) -> Result<ExecOutput, ConfigError> {
        let cred: ExecCredential = serde_json::from_slice(stdout)
            .map_err(|e| self.error(format!("output is not an ExecCredential: {e}")))?;
        if cred.kind != "ExecCredential" || cred.api_version != self.config.api_version {
            return Err(self.error(format!(
                "printed kind {:?} apiVersion {:?}, expected ExecCredential {}",
                cred.kind, cred.api_version, self.config.api_version
            )));
        }
        let status = cred
            .status
            .ok_or_else(|| self.error("the ExecCredential has no status"))?;
        let token = status.token.filter(|t| !t.is_empty());
        let cert = status.client_certificate_data.filter(|c| !c.is_empty());
        let key = status.client_key_data.filter(|k| !k.is_empty());
        if cert.is_some() != key.is_some() {
            return Err(self.error(
                "status.clientCertificateData and status.clientKeyData must be set together",
            ));
        }
        if token.is_none() && cert.is_none() {
            return Err(self.error("status has neither a token nor a client certificate"));
        }
        let expiration = status
            .expiration_timestamp
            .map(|t| {
                parse_rfc3339(&t).ok_or_else(|| {
                    self.error(format!("status.expirationTimestamp {t:?} is not RFC 3339"))
                })
            })
            .transpose()?;
        Ok(ExecOutput {
            token,
            client_certificate_data: cert,
            client_key_data: key,
            expiration,
        })
    }
}

/// Parses an RFC 3339 timestamp (`2026-01-02T15:04:05Z`, fractions and offsets allowed).
pub(crate) fn parse_rfc3339(s: &str) -> Option<SystemTime> {
    let b = s.as_bytes();
    if b.len() < 20 || b[4] != b'-' || b[7] != b'-' || !matches!(b[10], b'T' | b't' | b' ') {
        return None;
    }
    let num = |r: std::ops::Range<usize>| -> Option<i64> { s.get(r)?.parse().ok() };
    let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
    let (hour, min, sec) = (num(11..13)?, num(14..16)?, num(17..19)?);
    if b[13] != b':' || b[16] != b':' || !(1..=12).contains(&month) || !(1..=31).contains(&day) {
        return None;
    }
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if let Some(frac) = rest.strip_prefix('.') {
        let digits = frac.bytes().take_while(u8::is_ascii_digit).count();
        let padded = format!("{:0<9}", &frac[..digits.min(9)]);
        nanos = padded.parse().ok()?;
        rest = &frac[digits..];
    }
    let offset = match rest {
        "Z" | "z" => 0,
        _ if rest.len() == 6 && matches!(rest.as_bytes()[0], b'+' | b'-') => {
            let h: i64 = rest.get(1..3)?.parse().ok()?;
            let m: i64 = rest.get(4..6)?.parse().ok()?;
            let sign = if rest.starts_with('-') { -1 } else { 1 };
            sign * (h * 3600 + m * 60)
        }
        _ => return None,
    };
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    let secs = days * 86_400 + hour * 3600 + min * 60 + sec - offset;
    let secs = u64::try_from(secs).ok()?;
    Some(UNIX_EPOCH + Duration::new(secs, nanos))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_rfc3339() {
        let t = |s| parse_rfc3339(s).map(|t| t.duration_since(UNIX_EPOCH).unwrap().as_secs_f64());
        assert_eq!(t("1970-01-01T00:00:00Z"), Some(0.0));
        assert_eq!(t("2024-02-29T12:00:00Z"), Some(1_709_208_000.0));
        assert_eq!(t("2024-02-29T13:30:00.5+01:30"), Some(1_709_208_000.5));
        assert_eq!(t("2024-02-29 12:00:00Z"), Some(1_709_208_000.0));
        assert_eq!(t("2024-13-01T00:00:00Z"), None);
        assert_eq!(t("yesterday"), None);
        assert_eq!(t("2024-01-01T00:00:00"), None);
    }

    fn auth(api: &str, mode: Option<&str>) -> ExecConfig {
        ExecConfig {
            command: "plugin".into(),
            api_version: api.into(),
            interactive_mode: mode.map(String::from),
            ..ExecConfig::default()
        }
    }

    #[test]
    fn validates_like_kubectl() {
        assert!(auth(EXEC_API_VERSIONS[1], None).validate().is_ok());
        assert!(auth(EXEC_API_VERSIONS[0], Some("Never")).validate().is_ok());
        let e = auth(EXEC_API_VERSIONS[0], None).validate().unwrap_err();
        assert!(e.contains("interactiveMode"), "{e}");
        assert!(auth(EXEC_API_VERSIONS[0], Some("Always"))
            .validate()
            .is_err());
        let e = auth("client.authentication.k8s.io/v1alpha1", None)
            .validate()
            .unwrap_err();
        assert!(e.contains("v1alpha1"), "{e}");
    }

    #[test]
    fn parses_credentials_and_rejects_bad_output() {
        let a = ExecAuth::new(auth(EXEC_API_VERSIONS[1], None), None);
        let ok = a
            .parse(br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"2030-01-01T00:00:00Z"}}"#)
            .unwrap();
        assert_eq!(ok.token.unwrap().expose(), "t");
        assert!(ok.expiration.is_some());
        for (bad, want) in [
            (&br#"not json"#[..], "not an ExecCredential"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1","kind":"ExecCredential","status":{"token":"t"}}"#, "expected ExecCredential"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential"}"#, "no status"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{}}"#, "neither"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"clientCertificateData":"x"}}"#, "together"),
            (br#"{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","status":{"token":"t","expirationTimestamp":"soon"}}"#, "RFC 3339"),
        ] {
            let e = a.parse(bad).unwrap_err().to_string();
            assert!(e.contains(want), "{e}");
            assert!(!e.contains("\"t\""), "token leaked: {e}");
        }
    }
}
