//! kubectl against the server a snapshot is taken of (`discovery-snapshot` and its CRD part).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

/// kubectl against the snapshot's server.
pub(crate) struct Kubectl(PathBuf);

impl Kubectl {
    /// kubectl with `kubeconfig`.
    pub(crate) fn new(kubeconfig: PathBuf) -> Kubectl {
        Kubectl(kubeconfig)
    }
}

impl Kubectl {
    fn run(&self, args: &[&str]) -> Result<std::process::Output, String> {
        Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&self.0)
            .args(args)
            .output()
            .map_err(|e| format!("cannot run kubectl: {e}"))
    }

    pub(crate) fn text(&self, args: &[&str]) -> Result<String, String> {
        let output = self.run(args)?;
        if !output.status.success() {
            return Err(format!(
                "`kubectl {}` failed: {}",
                args.join(" "),
                String::from_utf8_lossy(&output.stderr)
            ));
        }
        String::from_utf8(output.stdout)
            .map_err(|e| format!("`kubectl {}` printed no UTF-8: {e}", args.join(" ")))
    }

    /// The warnings kubectl prints for the request (`Warning: ...` on stderr, one per `Warning`
    /// header the server sent).
    pub(crate) fn warnings(&self, args: &[&str]) -> Result<Vec<String>, String> {
        Ok(String::from_utf8_lossy(&self.run(args)?.stderr)
            .lines()
            .filter_map(|l| l.strip_prefix("Warning: "))
            .map(str::to_string)
            .collect())
    }

    pub(crate) fn json(&self, args: &[&str]) -> Result<Value, String> {
        serde_json::from_str(&self.text(args)?)
            .map_err(|e| format!("`kubectl {}` printed no JSON: {e}", args.join(" ")))
    }
}
