//! The sharded steps of `e2e --kind`: the sample-controller as three shards of one ring in slice
//! mode (`deploy/deployment-sharded.yaml`: each Foo and its Deployment labelled once with their
//! hash slice, the slices dealt to the replicas on their shard Leases), Foos spread over all of
//! them, one replica's pod deleted and a replica added, every Foo reconciled again by a live
//! replica, and — from every replica's log — no Foo ever reconciled by two replicas at once.
//!
//! A Foo's replica is the one whose shard Lease lists the Foo's slice
//! (`sharding.kcache.dev/slices`, `0-84,170`) in an acknowledged generation.
//!
//! Each replica logs `reconcile started <namespace>/<foo>` and `reconcile finished …` around
//! every reconcile (the example does so when sharded). A `kubectl logs -f --timestamps` per pod
//! copies its log to a file from the pod's start until its container exits, so a deleted pod's
//! log is kept too; the node's clock stamps every line.

// `foo` is sample-controller's resource, not a placeholder name.
#![allow(clippy::disallowed_names)]

use std::collections::{BTreeMap, BTreeSet};
use std::fs::File;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use super::kubectl::{wait_for, Kubectl};
use super::{manifest, Steps};
use crate::Failure;

/// The controller's pods in the sharded Deployment.
const SHARD_PODS: &str = "app=sample-controller-sharded";
/// The leader-elected Deployment's pods, which must be gone before the shards start.
const LEADER_ELECTED_PODS: &str = "app=sample-controller";
/// `--shard-ring` in the manifest: the slice label every Foo gets is `<prefix>/<ring>`.
const SLICE_LABEL: &str = "slice.sharding.kcache.dev/foos";
/// The ring's shard Leases.
const SHARD_LEASES: &str = "alpha.sharding.timebertt.dev/clusterring=foos";
/// Enough Foos that every shard of four gets some (the ring's largest share is within a few
/// percent of the mean).
const FOOS: usize = 24;
/// Liveness guards on a loaded 2-core machine, not timing assertions. A deleted replica's Foos
/// move once its Lease is released (graceful) — or expired, 15 s, if its release was lost.
const SETTLE: Duration = Duration::from_secs(180);

/// Runs the sharded steps after the leader-elected ones.
pub(super) fn run(k: &Kubectl, steps: &mut Steps) -> Result<(), Failure> {
    let mut logs = Logs::new(k)?;
    let result = run_steps(k, steps, &mut logs);
    logs.stop();
    result?;
    steps.run(
        "sharded: no Foo was reconciled by two replicas at once (every replica's log)",
        || {
            let checked = no_overlap(&logs.read()?)?;
            eprintln!("xtask e2e:   {checked}");
            Ok(())
        },
    )
}

fn run_steps(k: &Kubectl, steps: &mut Steps, logs: &mut Logs) -> Result<(), Failure> {
    steps.run(
        "sharded: 3 replicas of one ring; {FOOS} Foos spread over all three, each reconciled by its shard"
            .replace("{FOOS}", &FOOS.to_string())
            .as_str(),
        || {
            start_shards(k, logs)?;
            create_foos(k)?;
            let placed = wait_placed(k, logs, 3)?;
            events_name_their_shard(k, &placed)?;
            Ok(())
        },
    )?;
    steps.run(
        "sharded: delete one replica's pod, add a replica: every Foo moves to a live replica and is reconciled there",
        || {
            let before = shards(placement(k)?);
            let victim = busiest(&before);
            eprintln!("xtask e2e:   deleting pod {victim} ({} Foos)", count(&before, &victim));
            k.run(&["delete", "pod", &victim, "--wait=false"])?;
            k.run(&["scale", "deployment", "sample-controller-sharded", "--replicas=4"])?;
            let placed = wait_placed(k, logs, 4)?;
            if let Some(foo) = placed.iter().find(|(_, shard)| **shard == victim) {
                return Err(format!("{} is still placed on the deleted {victim}", foo.0).into());
            }
            reconciled_after_poke(k, logs, &placed)
        },
    )
}

/// Replaces the leader-elected Deployment with the sharded one and waits for its 3 pods.
fn start_shards(k: &Kubectl, logs: &mut Logs) -> Result<(), Failure> {
    k.run(&["delete", "deployment", "sample-controller", "--wait=true"])?;
    wait_for("the leader-elected replicas to be gone", SETTLE, || {
        let left = k.run(&["get", "pods", "-l", LEADER_ELECTED_PODS, "-o", "name"])?;
        match left.trim().is_empty() {
            true => Ok(Some(())),
            false => Err(format!(
                "still running: {}",
                left.trim().replace('\n', ", ")
            )),
        }
    })?;
    k.run(&[
        "apply",
        "-f",
        &manifest("deployment-sharded.yaml").display().to_string(),
    ])?;
    k.run(&[
        "rollout",
        "status",
        "deployment/sample-controller-sharded",
        &format!("--timeout={}s", SETTLE.as_secs()),
    ])?;
    logs.follow_new_pods()?;
    Ok(())
}

/// `shard-foo-00` …, one pause pod each (the CRD's minimum).
fn create_foos(k: &Kubectl) -> Result<(), Failure> {
    let docs: Vec<String> = (0..FOOS)
        .map(|i| {
            format!(
                "apiVersion: samplecontroller.k8s.io/v1alpha1\nkind: Foo\nmetadata:\n  name: \
                 shard-foo-{i:02}\nspec:\n  deploymentName: shard-foo-{i:02}\n  replicas: 1\n"
            )
        })
        .collect();
    k.run_with_input(&["apply", "-f", "-"], Some(&docs.join("---\n")))?;
    Ok(())
}

/// Shard (Lease name) → its slices, for the Leases that list slices, each of which must have
/// acknowledged its latest generation. A Lease without slices (a gone shard's, cleared by the
/// sharder in a generation nobody acknowledges) holds nothing.
fn acknowledged_slices(k: &Kubectl) -> Result<BTreeMap<String, String>, String> {
    let path = "{range .items[*]}{.metadata.name}|{.metadata.annotations.sharding\\.kcache\\.dev/slices}|{.metadata.annotations.sharding\\.kcache\\.dev/generation}|{.metadata.annotations.sharding\\.kcache\\.dev/acknowledged}{\"\\n\"}{end}";
    let text = k.jsonpath(&["leases", "-l", SHARD_LEASES], path)?;
    let mut shards = BTreeMap::new();
    for line in text.lines().filter(|l| !l.is_empty()) {
        match line.split('|').collect::<Vec<_>>()[..] {
            [_, "", _, _] => {}
            [name, slices, generation, acknowledged] if generation == acknowledged => {
                shards.insert(name.to_string(), slices.to_string());
            }
            [name, _, generation, acknowledged] => {
                return Err(format!(
                    "Lease {name}: generation {generation:?} not acknowledged ({acknowledged:?})"
                ))
            }
            _ => return Err(format!("unreadable Lease line {line:?}")),
        }
    }
    Ok(shards)
}

/// Whether slice list `list` (`0-84,170`, as the sharder writes it) holds `slice`.
fn lists(list: &str, slice: u32) -> bool {
    list.split(',').filter(|p| !p.is_empty()).any(|part| {
        let (first, last) = part.split_once('-').unwrap_or((part, part));
        match (first.parse::<u32>(), last.parse::<u32>()) {
            (Ok(first), Ok(last)) => (first..=last).contains(&slice),
            _ => false,
        }
    })
}

/// Foo name → (the shard (pod) whose acknowledged slices hold its slice, its slice), for the
/// sharded Foos.
fn placement(k: &Kubectl) -> Result<BTreeMap<String, (String, String)>, String> {
    let path = format!(
        "{{range .items[*]}}{{.metadata.name}}|{{.metadata.labels.{}}}|{{.status.availableReplicas}}{{\"\\n\"}}{{end}}",
        jsonpath_key(SLICE_LABEL)
    );
    let text = k.jsonpath(&["foos"], &path)?;
    let shards = acknowledged_slices(k)?;
    let mut placed = BTreeMap::new();
    for line in text.lines().filter(|l| l.starts_with("shard-foo-")) {
        let [name, slice, status] = line.split('|').collect::<Vec<_>>()[..] else {
            return Err(format!("unreadable line {line:?}"));
        };
        let Ok(n) = slice.parse::<u32>() else {
            return Err(format!("{name}: slice label {slice:?}"));
        };
        let holders: Vec<&String> = shards
            .iter()
            .filter(|(_, list)| lists(list, n))
            .map(|(shard, _)| shard)
            .collect();
        match (&holders[..], status) {
            ([shard], status) if !status.is_empty() => {
                placed.insert(name.to_string(), (shard.to_string(), slice.to_string()));
            }
            (holders, status) => {
                return Err(format!(
                    "{name}: slice {n} held by {holders:?}, status.availableReplicas {status:?}"
                ))
            }
        }
    }
    match placed.len() {
        FOOS => Ok(placed),
        n => Err(format!("{n} of {FOOS} Foos placed")),
    }
}

/// Foo name → its shard, from a [`placement`].
fn shards(placed: BTreeMap<String, (String, String)>) -> BTreeMap<String, String> {
    placed
        .into_iter()
        .map(|(foo, (shard, _))| (foo, shard))
        .collect()
}

/// A label key in a jsonpath: its dots and slash escaped.
fn jsonpath_key(label: &str) -> String {
    label.replace('.', "\\.")
}

/// Waits until every Foo's slice is held by one of `replicas` live, ready pods (all of them
/// used), it has a status (it was reconciled), and its Deployment carries the same slice label.
fn wait_placed(
    k: &Kubectl,
    logs: &mut Logs,
    replicas: usize,
) -> Result<BTreeMap<String, String>, String> {
    let placed = wait_for(
        &format!("every Foo placed on one of {replicas} live replicas and reconciled"),
        SETTLE,
        || {
            logs.follow_new_pods()?;
            let pods = k.live_pods(SHARD_PODS)?;
            let ready: BTreeSet<String> = pods
                .iter()
                .filter(|p| p.running_ready)
                .map(|p| p.name.clone())
                .collect();
            if ready.len() != replicas {
                return Err(format!("{} of {replicas} replicas ready", ready.len()));
            }
            let placed = placement(k)?;
            if let Some((foo, (shard, _))) = placed.iter().find(|(_, s)| !ready.contains(&s.0)) {
                return Err(format!("{foo} placed on {shard}, not a live replica"));
            }
            let used: BTreeSet<&String> = placed.values().map(|(shard, _)| shard).collect();
            if used.len() != replicas {
                return Err(format!("Foos on {} of {replicas} replicas", used.len()));
            }
            deployments_follow(k, &placed)?;
            Ok(Some(shards(placed)))
        },
    )?;
    let mut per_shard: BTreeMap<&str, usize> = BTreeMap::new();
    for shard in placed.values() {
        *per_shard.entry(shard).or_default() += 1;
    }
    eprintln!("xtask e2e:   Foos per replica: {per_shard:?}");
    Ok(placed)
}

/// Every Foo's Deployment carries its Foo's slice label (created so by the shard, or labelled
/// by the sharder: its key is its controller owner's), so it is in the same shard's cache.
fn deployments_follow(
    k: &Kubectl,
    placed: &BTreeMap<String, (String, String)>,
) -> Result<(), String> {
    let path = format!(
        "{{range .items[*]}}{{.metadata.name}}|{{.metadata.labels.{}}}{{\"\\n\"}}{{end}}",
        jsonpath_key(SLICE_LABEL)
    );
    let text = k.jsonpath(&["deployments"], &path)?;
    let labels: BTreeMap<&str, &str> = text.lines().filter_map(|l| l.split_once('|')).collect();
    for (foo, (_, slice)) in placed {
        match labels.get(foo.as_str()) {
            Some(s) if s == slice => {}
            other => {
                return Err(format!(
                    "Deployment {foo}: slice {other:?}, its Foo's {slice}"
                ))
            }
        }
    }
    Ok(())
}

/// The replica holding most Foos.
fn busiest(placed: &BTreeMap<String, String>) -> String {
    let mut shards: Vec<&String> = placed.values().collect();
    shards.sort();
    shards.dedup();
    shards
        .into_iter()
        .max_by_key(|s| count(placed, s))
        .cloned()
        .unwrap_or_default()
}

fn count(placed: &BTreeMap<String, String>, shard: &str) -> usize {
    placed.values().filter(|s| *s == shard).count()
}

/// Each Foo's Synced Event names the replica its slice is dealt to (`reportingInstance`
/// `sample-controller-<pod>`).
fn events_name_their_shard(k: &Kubectl, placed: &BTreeMap<String, String>) -> Result<(), String> {
    wait_for("a Synced Event on every Foo from its shard", SETTLE, || {
        let text = k.jsonpath(
            &[
                "events",
                "--field-selector",
                "involvedObject.kind=Foo,reason=Synced",
            ],
            "{range .items[*]}{.involvedObject.name}|{.reportingInstance}{\"\\n\"}{end}",
        )?;
        let seen: BTreeSet<(&str, &str)> = text.lines().filter_map(|l| l.split_once('|')).collect();
        for (foo, shard) in placed {
            let instance = format!("sample-controller-{shard}");
            if !seen.contains(&(foo.as_str(), instance.as_str())) {
                return Err(format!("no Synced Event on {foo} from {instance}"));
            }
        }
        Ok(Some(()))
    })?;
    eprintln!("xtask e2e:   every Foo has a Synced Event from the replica its slice is dealt to");
    Ok(())
}

/// Annotates every Foo, then waits until each one's reconcile finished again in the log of the
/// replica it is placed on.
fn reconciled_after_poke(
    k: &Kubectl,
    logs: &mut Logs,
    placed: &BTreeMap<String, String>,
) -> Result<(), Failure> {
    let before = finished_per_pod(&logs.read()?);
    k.run(&[
        "annotate",
        "foos",
        "--all",
        "--overwrite",
        "e2e.kcache.dev/poked=yes",
    ])?;
    let namespace = k.namespace.clone();
    wait_for("every Foo reconciled again by its replica", SETTLE, || {
        logs.follow_new_pods()?;
        let now = finished_per_pod(&logs.read()?);
        for (foo, shard) in placed {
            let key = (shard.clone(), format!("{namespace}/{foo}"));
            let (was, is) = (
                before.get(&key).copied().unwrap_or(0),
                now.get(&key).copied().unwrap_or(0),
            );
            if is <= was {
                return Err(format!("{foo} not reconciled again on {shard}"));
            }
        }
        Ok(Some(()))
    })?;
    eprintln!(
        "xtask e2e:   all {FOOS} Foos reconciled again, each by the replica holding its slice"
    );
    Ok(())
}

/// (pod, Foo key) → how many reconciles finished.
fn finished_per_pod(logs: &BTreeMap<String, Vec<LogLine>>) -> BTreeMap<(String, String), usize> {
    let mut out = BTreeMap::new();
    for (pod, lines) in logs {
        for line in lines.iter().filter(|l| !l.started) {
            *out.entry((pod.clone(), line.key.clone())).or_default() += 1;
        }
    }
    out
}

/// One `reconcile started|finished <key>` line of a replica's log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct LogLine {
    at: Stamp,
    started: bool,
    key: String,
}

/// A log line's time: its date (`YYYY-MM-DD`, ordered as text) and nanoseconds into the day.
type Stamp = (String, u64);

/// Reads `kubectl logs --timestamps` output: `<RFC 3339 time> <line>`, keeping the reconcile
/// lines (the log's own formatting, colours included, around the message is skipped).
fn parse_log(text: &str) -> Vec<LogLine> {
    text.lines()
        .filter_map(|line| {
            let (stamp, rest) = line.split_once(' ')?;
            let at = parse_stamp(stamp)?;
            let (started, tail) = if let Some(i) = rest.find("reconcile started ") {
                (true, &rest[i + "reconcile started ".len()..])
            } else {
                let i = rest.find("reconcile finished ")?;
                (false, &rest[i + "reconcile finished ".len()..])
            };
            let key = tail.split_whitespace().next()?.to_string();
            Some(LogLine { at, started, key })
        })
        .collect()
}

/// `2026-11-28T23:01:02.5Z` (Go's RFC3339Nano, trailing zeros trimmed) as a [`Stamp`].
fn parse_stamp(s: &str) -> Option<Stamp> {
    let (date, time) = s.strip_suffix('Z')?.split_once('T')?;
    let (hms, frac) = time.split_once('.').unwrap_or((time, "0"));
    let mut parts = hms.split(':').map(|p| p.parse::<u64>().ok());
    let (h, m, sec) = (parts.next()??, parts.next()??, parts.next()??);
    if frac.len() > 9 || !frac.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let nanos: u64 = format!("{frac:0<9}").parse().ok()?;
    Some((
        date.to_string(),
        ((h * 60 + m) * 60 + sec) * 1_000_000_000 + nanos,
    ))
}

/// Checks that no Foo's reconcile on one replica overlaps one on another. A reconcile still
/// running when a log ended counts until the end of time: a replica stops its reconciles before
/// it exits, so an unfinished one in a finished log is itself a failure.
fn no_overlap(logs: &BTreeMap<String, Vec<LogLine>>) -> Result<String, String> {
    let never: Stamp = ("9999-12-31".into(), 0);
    // key → (start, end, pod)
    let mut intervals: BTreeMap<&str, Vec<(Stamp, Stamp, &str)>> = BTreeMap::new();
    for (pod, lines) in logs {
        let mut open: BTreeMap<&str, Stamp> = BTreeMap::new();
        for line in lines {
            match line.started {
                true => {
                    open.insert(&line.key, line.at.clone());
                }
                false => {
                    let start = open
                        .remove(line.key.as_str())
                        .ok_or_else(|| format!("{pod}: {} finished without starting", line.key))?;
                    intervals
                        .entry(&line.key)
                        .or_default()
                        .push((start, line.at.clone(), pod));
                }
            }
        }
        for (key, start) in open {
            intervals
                .entry(key)
                .or_default()
                .push((start, never.clone(), pod));
        }
    }
    let mut total = 0;
    for (key, list) in &mut intervals {
        list.sort();
        total += list.len();
        for pair in list.windows(2) {
            let ((_, end, a), (start, _, b)) = (&pair[0], &pair[1]);
            if start < end && a != b {
                return Err(format!(
                    "{key} reconciled by {a} (until {end:?}) and {b} (from {start:?}) at once"
                ));
            }
        }
    }
    match total {
        0 => Err("no reconcile in any replica's log".into()),
        n => Ok(format!(
            "{n} reconciles of {} Foos in {} replicas' logs, none overlapping another replica's",
            intervals.len(),
            logs.len()
        )),
    }
}

/// `kubectl logs -f --timestamps` of every sharded pod seen so far, each into a file.
struct Logs<'a> {
    k: &'a Kubectl,
    dir: PathBuf,
    followers: BTreeMap<String, Child>,
}

impl<'a> Logs<'a> {
    fn new(k: &'a Kubectl) -> Result<Self, String> {
        Ok(Logs {
            k,
            dir: crate::temp_dir("kcache-e2e-shard-logs")?,
            followers: BTreeMap::new(),
        })
    }

    /// Starts a follower for every sharded pod whose container runs (before that `kubectl logs`
    /// fails at once), and again for a live pod whose follower ended; `-f` starts at the log's
    /// beginning, so a restarted follower rewrites the whole file.
    fn follow_new_pods(&mut self) -> Result<(), String> {
        for pod in self.k.live_pods(SHARD_PODS)? {
            let running = match self.followers.get_mut(&pod.name) {
                Some(child) => matches!(child.try_wait(), Ok(None)),
                None => false,
            };
            if running || !pod.running_ready {
                continue;
            }
            let file = File::create(self.dir.join(&pod.name)).map_err(|e| e.to_string())?;
            let child = Command::new("kubectl")
                .arg("--kubeconfig")
                .arg(&self.k.kubeconfig)
                .args([
                    "-n",
                    &self.k.namespace,
                    "logs",
                    "-f",
                    "--timestamps",
                    &pod.name,
                ])
                .stdin(Stdio::null())
                .stdout(file)
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("cannot run kubectl logs: {e}"))?;
            self.followers.insert(pod.name, child);
        }
        Ok(())
    }

    /// Every pod's reconcile lines so far.
    fn read(&self) -> Result<BTreeMap<String, Vec<LogLine>>, String> {
        self.followers
            .keys()
            .map(|pod| {
                let text =
                    std::fs::read_to_string(self.dir.join(pod)).map_err(|e| e.to_string())?;
                Ok((pod.clone(), parse_log(&text)))
            })
            .collect()
    }

    /// Stops the followers of live pods (a deleted pod's ended with its container).
    fn stop(&mut self) {
        for child in self.followers.values_mut() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

impl Drop for Logs<'_> {
    fn drop(&mut self) {
        self.stop();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(at: u64, started: bool, key: &str) -> LogLine {
        LogLine {
            at: ("2026-11-28".into(), at),
            started,
            key: key.into(),
        }
    }

    #[test]
    fn stamps_read_go_rfc3339_nano() {
        assert_eq!(
            parse_stamp("2026-11-28T23:01:02.5Z"),
            Some(("2026-11-28".into(), 82_862_500_000_000))
        );
        assert_eq!(
            parse_stamp("2026-11-28T00:00:01Z"),
            Some(("2026-11-28".into(), 1_000_000_000))
        );
        assert_eq!(parse_stamp("2026-11-28T00:00:01.1234567891Z"), None);
        assert_eq!(parse_stamp("garbage"), None);
    }

    #[test]
    fn reconcile_lines_are_read_through_the_log_format() {
        let text = "2026-11-28T00:00:01.000000001Z \u{1b}[2m2026-11-28T00:00:01Z\u{1b}[0m \
                    \u{1b}[32m INFO\u{1b}[0m reconcile started ns/shard-foo-01\n\
                    2026-11-28T00:00:02Z  INFO something else\n\
                    2026-11-28T00:00:03Z  INFO reconcile finished ns/shard-foo-01\n";
        assert_eq!(
            parse_log(text),
            vec![
                line(1_000_000_001, true, "ns/shard-foo-01"),
                line(3_000_000_000, false, "ns/shard-foo-01"),
            ]
        );
    }

    #[test]
    fn overlapping_reconciles_on_two_replicas_fail() {
        let logs = BTreeMap::from([
            (
                "a".to_string(),
                vec![line(1, true, "k"), line(5, false, "k")],
            ),
            (
                "b".to_string(),
                vec![line(4, true, "k"), line(6, false, "k")],
            ),
        ]);
        let e = no_overlap(&logs).unwrap_err();
        assert!(
            e.contains("k reconciled by a") && e.contains("and b"),
            "{e}"
        );
    }

    #[test]
    fn a_hand_over_in_sequence_passes_and_an_unfinished_reconcile_blocks_it() {
        let sequence = BTreeMap::from([
            (
                "a".to_string(),
                vec![line(1, true, "k"), line(2, false, "k")],
            ),
            (
                "b".to_string(),
                vec![line(3, true, "k"), line(4, false, "k")],
            ),
        ]);
        let ok = no_overlap(&sequence).unwrap();
        assert!(
            ok.starts_with("2 reconciles of 1 Foos in 2 replicas"),
            "{ok}"
        );
        let unfinished = BTreeMap::from([
            ("a".to_string(), vec![line(1, true, "k")]),
            (
                "b".to_string(),
                vec![line(3, true, "k"), line(4, false, "k")],
            ),
        ]);
        assert!(no_overlap(&unfinished).is_err());
        assert!(no_overlap(&BTreeMap::new()).is_err());
    }

    #[test]
    fn slice_lists_are_read_as_the_sharder_writes_them() {
        assert!(lists("0-84,170", 0) && lists("0-84,170", 84) && lists("0-84,170", 170));
        assert!(!lists("0-84,170", 85) && !lists("", 0) && !lists("x", 0));
    }

    #[test]
    fn the_busiest_replica_is_the_one_with_most_foos() {
        let placed = BTreeMap::from([
            ("f1".to_string(), "a".to_string()),
            ("f2".to_string(), "b".to_string()),
            ("f3".to_string(), "b".to_string()),
        ]);
        assert_eq!(busiest(&placed), "b");
    }
}
