//! kubectl against the e2e cluster, and bounded polling of what it reports.

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// kubectl with the cluster's kubeconfig, in the e2e namespace.
pub(crate) struct Kubectl {
    pub(crate) kubeconfig: PathBuf,
    pub(crate) namespace: String,
}

impl Kubectl {
    /// `kubectl -n NAMESPACE ARGS`: its stdout, or an error with its stderr.
    pub(crate) fn run(&self, args: &[&str]) -> Result<String, String> {
        self.run_with_input(args, None)
    }

    /// `kubectl ARGS` (no namespace: cluster-scoped objects).
    pub(crate) fn run_cluster(&self, args: &[&str]) -> Result<String, String> {
        self.exec(args, None)
    }

    /// `kubectl -n NAMESPACE ARGS` with `input` on stdin (`apply -f -`).
    pub(crate) fn run_with_input(
        &self,
        args: &[&str],
        input: Option<&str>,
    ) -> Result<String, String> {
        let mut all = vec!["-n", self.namespace.as_str()];
        all.extend_from_slice(args);
        self.exec(&all, input)
    }

    fn exec(&self, args: &[&str], input: Option<&str>) -> Result<String, String> {
        let kubeconfig = self.kubeconfig.display().to_string();
        let mut child = Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&kubeconfig)
            .args(args)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run kubectl: {e}"))?;
        if let (Some(text), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin
                .write_all(text.as_bytes())
                .map_err(|e| format!("cannot write to kubectl: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("kubectl failed: {e}"))?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(format!(
                "`kubectl {}` failed ({}): {}",
                args.join(" "),
                out.status,
                String::from_utf8_lossy(&out.stderr).trim()
            ))
        }
    }

    /// `kubectl get WHAT -o jsonpath=PATH`, trimmed; an error (not found, forbidden) as `Err`.
    pub(crate) fn jsonpath(&self, what: &[&str], path: &str) -> Result<String, String> {
        let output = format!("jsonpath={path}");
        let mut args = vec!["get"];
        args.extend_from_slice(what);
        args.extend_from_slice(&["-o", &output]);
        self.run(&args).map(|s| s.trim().to_string())
    }

    /// The pods with `selector` that are not being deleted.
    pub(crate) fn live_pods(&self, selector: &str) -> Result<Vec<Pod>, String> {
        let path = "{range .items[*]}{.metadata.name}|{.status.phase}|\
                    {.status.containerStatuses[0].ready}|{.metadata.deletionTimestamp}{\"\\n\"}{end}";
        let text = self.jsonpath(&["pods", "-l", selector], path)?;
        Ok(parse_pods(&text))
    }
}

/// A pod as `live_pods` lists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pod {
    pub(crate) name: String,
    pub(crate) running_ready: bool,
}

/// Reads `name|phase|ready|deletionTimestamp` lines, leaving out pods being deleted.
fn parse_pods(text: &str) -> Vec<Pod> {
    text.lines()
        .filter_map(
            |line| match line.trim().split('|').collect::<Vec<_>>()[..] {
                [name, phase, ready, ""] if !name.is_empty() => Some(Pod {
                    name: name.to_string(),
                    running_ready: phase == "Running" && ready == "true",
                }),
                _ => None, // being deleted (a deletionTimestamp), or not a pod line
            },
        )
        .collect()
}

/// Polls `check` every second until it returns `Some`, for at most `limit`; the error names
/// what was awaited and the last thing `check` saw.
pub(crate) fn wait_for<T>(
    what: &str,
    limit: Duration,
    mut check: impl FnMut() -> Result<Option<T>, String>,
) -> Result<T, String> {
    let start = Instant::now();
    let mut last = String::from("nothing observed yet");
    loop {
        match check() {
            Ok(Some(found)) => return Ok(found),
            Ok(None) => {}
            Err(e) => last = e,
        }
        if start.elapsed() >= limit {
            return Err(format!(
                "timed out after {limit:?} waiting for {what} (last: {last})"
            ));
        }
        std::thread::sleep(Duration::from_secs(1));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pods_being_deleted_are_left_out() {
        let text = "a|Running|true|\nb|Pending|false|\nc|Running|true|2026-11-23T19:00:00Z\n\n";
        let pods = parse_pods(text);
        assert_eq!(
            pods,
            vec![
                Pod {
                    name: "a".into(),
                    running_ready: true
                },
                Pod {
                    name: "b".into(),
                    running_ready: false
                },
            ]
        );
    }

    #[test]
    fn a_pod_without_container_status_is_not_ready() {
        assert_eq!(
            parse_pods("a|Pending||\nb|Pending||2026-11-23T19:00:00Z\n"),
            vec![Pod {
                name: "a".into(),
                running_ready: false
            }]
        );
    }

    #[test]
    fn waiting_times_out_with_the_last_observation() {
        let e = wait_for::<()>("the moon", Duration::ZERO, || Err("no moon".into())).unwrap_err();
        assert!(e.contains("the moon") && e.contains("no moon"), "{e}");
    }
}
