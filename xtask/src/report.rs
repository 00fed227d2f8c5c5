//! Runs the integration test targets and reports what ran, passed, failed and was skipped.

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};

/// The marker integration tests print (with `--show-output`) when they skip a case.
const SKIP_MARKER: &str = "kcache-skip:";

#[derive(Default)]
struct Counts {
    passed: usize,
    failed: usize,
    ignored: usize,
    skipped: Vec<String>,
}

impl Counts {
    fn read_line(&mut self, line: &str) {
        if let Some(rest) = line.trim().strip_prefix("test result: ") {
            for part in rest.split(';') {
                let mut words = part.split_whitespace().rev();
                let (Some(label), Some(n)) = (words.next(), words.next()) else {
                    continue;
                };
                let n: usize = n.parse().unwrap_or(0);
                match label {
                    "passed" => self.passed += n,
                    "failed" => self.failed += n,
                    "ignored" => self.ignored += n,
                    _ => {}
                }
            }
        } else if let Some(pos) = line.find(SKIP_MARKER) {
            self.skipped
                .push(line[pos + SKIP_MARKER.len()..].trim().to_string());
        }
    }
}

/// `cargo test --workspace --no-fail-fast --test '*' -- --show-output` with `envs`; prints the output as it
/// comes and a summary at the end: `title`, every skip with its reason, and `tier`'s totals.
pub fn run_tests(title: &str, tier: &str, envs: &[(&str, &str)]) -> Result<(), String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // Every target runs, whatever fails first: a tier's totals count all of them.
    let args = [
        "test",
        "--workspace",
        "--no-fail-fast",
        "--test",
        "*",
        "--",
        "--show-output",
    ];
    eprintln!("xtask: cargo {}", args.join(" "));
    let mut child = Command::new(cargo)
        .args(args)
        .envs(envs.iter().copied())
        .current_dir(crate::workspace_root())
        .stdout(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    let mut counts = Counts::default();
    if let Some(out) = child.stdout.take() {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            println!("{line}");
            counts.read_line(&line);
        }
    }
    let status = child.wait().map_err(|e| format!("cargo test: {e}"))?;
    println!("\n{title}:");
    for s in &counts.skipped {
        println!("  skipped: {s}");
    }
    println!(
        "{tier}: {} passed, {} failed, {} skipped (+{} ignored)",
        counts.passed,
        counts.failed,
        counts.skipped.len(),
        counts.ignored
    );
    if status.success() && counts.failed == 0 {
        Ok(())
    } else {
        Err(format!(
            "integration tests failed against {tier} ({status})"
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_results_and_skips() {
        let mut c = Counts::default();
        c.read_line("test result: ok. 3 passed; 1 failed; 2 ignored; 0 measured; 0 filtered out; finished in 0.1s");
        c.read_line("kcache-skip: watch_list: kube-apiserver 1.20 has no sendInitialEvents");
        c.read_line("test result: ok. 4 passed; 0 failed; 0 ignored; 0 measured; 0 filtered out");
        assert_eq!((c.passed, c.failed, c.ignored), (7, 1, 2));
        assert_eq!(
            c.skipped,
            vec!["watch_list: kube-apiserver 1.20 has no sendInitialEvents".to_string()]
        );
    }
}
