//! A kind cluster's lifecycle for the tiers that need a full cluster (`integration --kind`,
//! `e2e --kind`): find the `kind` and `docker` tools (or say exactly what is missing, exit
//! code 2), reuse the named cluster or create it, wait until its nodes are Ready (bounded; the
//! node conditions are in the error), write its kubeconfig to a temp file, and delete the
//! cluster on drop when this run created it and `--keep` was not given.
//!
//! Every external command runs with a deadline, so a wedged Docker daemon is an error, not a
//! hang. Node readiness is read with the `kubectl` inside the control-plane node container
//! (`docker exec`), so the host needs nothing but `kind` and `docker`.

use std::ffi::{OsStr, OsString};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::Failure;

/// The cluster name used when neither `--cluster` nor anything else names one.
pub(crate) const DEFAULT_CLUSTER: &str = "kcache-it";

/// Where kind's install instructions live; every "kind is missing" message points there.
const KIND_INSTALL: &str = "https://kind.sigs.k8s.io/docs/user/quick-start/#installation";

/// How long `docker info` / `kind version` / `kind get ...` may take.
const QUICK: Duration = Duration::from_secs(30);
/// How long `kind create cluster` may take (it takes ≈ 30 s on 2 cores).
const CREATE: Duration = Duration::from_secs(600);
/// How long `kind delete cluster` may take.
const DELETE: Duration = Duration::from_secs(180);
/// How long the nodes may take to become Ready after `kind create cluster` returned.
pub(crate) const READY_TIMEOUT: Duration = Duration::from_secs(180);

/// What `--kind`, `--cluster`, `--image`, `--keep` (and `KIND`, `KIND_NODE_IMAGE`) ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct KindOptions {
    /// The kind binary: a path, or a name looked up on `PATH`.
    pub kind: String,
    /// The cluster to reuse or create.
    pub cluster: String,
    /// The node image for a new cluster; `None`: kind's default.
    pub image: Option<String>,
    /// Leave a cluster this run created in place.
    pub keep: bool,
}

impl KindOptions {
    /// Reads the kind flags out of `args` (returning the rest, for the caller's own flags) with
    /// `env` standing for the environment; flags win over `KIND` and `KIND_NODE_IMAGE`.
    pub(crate) fn parse(
        args: &[String],
        env: impl Fn(&str) -> Option<String>,
    ) -> Result<(KindOptions, Vec<String>), Failure> {
        let non_empty = |v: Option<String>| v.filter(|s| !s.trim().is_empty());
        let mut opts = KindOptions {
            kind: non_empty(env("KIND")).unwrap_or_else(|| "kind".into()),
            cluster: DEFAULT_CLUSTER.into(),
            image: non_empty(env("KIND_NODE_IMAGE")),
            keep: false,
        };
        let mut rest = Vec::new();
        let mut it = args.iter();
        while let Some(arg) = it.next() {
            let (flag, inline) = match arg.split_once('=') {
                Some((f, v)) if f.starts_with("--") => (f, Some(v.to_string())),
                _ => (arg.as_str(), None),
            };
            let mut value = |what: &str| -> Result<String, Failure> {
                let v = match inline.clone() {
                    Some(v) => v,
                    None => it
                        .next()
                        .cloned()
                        .ok_or_else(|| Failure::usage(format!("{flag} needs a value ({what})")))?,
                };
                if v.trim().is_empty() || v.starts_with("--") {
                    return Err(Failure::usage(format!(
                        "{flag} needs a value ({what}), got {v:?}"
                    )));
                }
                Ok(v)
            };
            match flag {
                "--kind" => opts.kind = value("the kind binary")?,
                "--cluster" => opts.cluster = value("a cluster name")?,
                "--image" => opts.image = Some(value("a node image")?),
                "--keep" if inline.is_none() => opts.keep = true,
                _ => rest.push(arg.clone()),
            }
        }
        check_cluster_name(&opts.cluster)?;
        Ok((opts, rest))
    }
}

/// kind names clusters after Docker containers and kubeconfig contexts: lowercase letters,
/// digits and `-`, as kind itself validates.
fn check_cluster_name(name: &str) -> Result<(), Failure> {
    let ok = !name.is_empty()
        && name.len() <= 50
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(Failure::usage(format!(
            "invalid cluster name {name:?}: use lowercase letters, digits and '-' (at most 50)"
        )))
    }
}

/// The tools a kind cluster needs, checked to be present and working.
#[derive(Debug, Clone)]
pub(crate) struct Tools {
    /// The kind binary as found.
    pub kind: PathBuf,
    /// The docker binary as found.
    pub docker: PathBuf,
    /// The `PATH` the tools run with (kind runs `docker` from it).
    path: OsString,
}

impl Tools {
    /// Finds `kind` and `docker` on `path` and checks that the Docker daemon answers. Anything
    /// missing is a [`Failure::missing`] (exit code 2) saying what and how to get it.
    pub(crate) fn find(kind: &str, path: &OsStr) -> Result<Tools, Failure> {
        let kind_bin = which(kind, path).ok_or_else(|| {
            let looked = if kind.contains('/') {
                format!("{kind} does not exist or is not executable")
            } else {
                format!("no `{kind}` on PATH")
            };
            Failure::missing(format!(
                "kind is missing ({looked}). Install it as {KIND_INSTALL} shows (where there is \
                 no internet access, the project's kind-assets.sh script builds kind and a node \
                 image from local sources), then put it on PATH or set KIND=/path/to/kind \
                 (or pass --kind PATH)."
            ))
        })?;
        let docker = which("docker", path).ok_or_else(|| {
            Failure::missing(
                "docker is missing (no `docker` on PATH): kind runs each node as a Docker \
                 container. Install Docker (https://docs.docker.com/engine/install/) and start \
                 its daemon."
                    .to_string(),
            )
        })?;
        let tools = Tools {
            kind: kind_bin,
            docker,
            path: path.to_os_string(),
        };
        let info = tools.run_docker(&["info", "--format", "{{.ServerVersion}}"], QUICK);
        match info {
            Ok(out) if out.ok && !out.stdout.trim().is_empty() => {}
            Ok(out) => {
                return Err(Failure::missing(format!(
                    "the Docker daemon is not reachable (`docker info` said: {}). Start it \
                     (`sudo systemctl start docker`, or `dockerd &`) or point DOCKER_HOST at a \
                     running one.",
                    out.summary()
                )))
            }
            Err(e) => {
                return Err(Failure::missing(format!(
                    "the Docker daemon is not reachable ({e}). Start it (`sudo systemctl start \
                     docker`, or `dockerd &`) or point DOCKER_HOST at a running one."
                )))
            }
        }
        let version = tools
            .run_kind(&["version"], QUICK)
            .map_err(Failure::missing)?;
        if !version.ok {
            return Err(Failure::missing(format!(
                "{} does not work as kind (`kind version` said: {}); install kind as {KIND_INSTALL} shows.",
                tools.kind.display(),
                version.summary()
            )));
        }
        Ok(tools)
    }

    fn command(&self, bin: &Path, args: &[&str]) -> Command {
        let mut cmd = Command::new(bin);
        cmd.args(args).env("PATH", &self.path);
        cmd
    }

    pub(crate) fn run_kind(&self, args: &[&str], limit: Duration) -> Result<Output, String> {
        run(self.command(&self.kind, args), limit)
    }

    pub(crate) fn run_docker(&self, args: &[&str], limit: Duration) -> Result<Output, String> {
        run(self.command(&self.docker, args), limit)
    }
}

/// A kind cluster for this run; dropping it deletes the cluster if this run created it and
/// `keep` was not asked for.
#[derive(Debug)]
pub(crate) struct KindCluster {
    tools: Tools,
    name: String,
    created: bool,
    keep: bool,
    kubeconfig: PathBuf,
    dir: PathBuf,
}

impl KindCluster {
    /// Reuses the cluster `opts.cluster` names or creates it, waits for Ready nodes and writes
    /// the kubeconfig.
    pub(crate) fn up(opts: &KindOptions, path: &OsStr) -> Result<KindCluster, Failure> {
        let tools = Tools::find(&opts.kind, path)?;
        let existing = tools.run_kind(&["get", "clusters"], QUICK)?;
        if !existing.ok {
            return Err(format!("`kind get clusters` failed: {}", existing.summary()).into());
        }
        let exists = existing.stdout.lines().any(|l| l.trim() == opts.cluster);
        let dir = crate::temp_dir("kcache-kind")?;
        let mut cluster = KindCluster {
            tools,
            name: opts.cluster.clone(),
            created: false,
            keep: opts.keep,
            kubeconfig: dir.join("kubeconfig"),
            dir,
        };
        if exists {
            eprintln!("xtask: reusing kind cluster {}", cluster.name);
        } else {
            cluster.create(opts.image.as_deref())?;
        }
        cluster.wait_ready(READY_TIMEOUT)?;
        cluster.write_kubeconfig()?;
        Ok(cluster)
    }

    fn create(&mut self, image: Option<&str>) -> Result<(), Failure> {
        let mut args = vec!["create", "cluster", "--name", &self.name, "--wait", "120s"];
        if let Some(image) = image {
            args.extend(["--image", image]);
        }
        eprintln!("xtask: kind {}", args.join(" "));
        // From here on the cluster may exist, half made: delete it on drop whatever happens.
        self.created = true;
        let out = self.tools.run_kind(&args, CREATE)?;
        if out.ok {
            Ok(())
        } else {
            Err(format!("`kind create cluster` failed: {}", out.summary()).into())
        }
    }

    /// Polls the nodes' `Ready` condition until every node has it `True`, or fails after
    /// `limit` with each node's conditions.
    pub(crate) fn wait_ready(&self, limit: Duration) -> Result<(), Failure> {
        let start = Instant::now();
        let node = format!("{}-control-plane", self.name);
        let template = r#"{range .items[*]}{.metadata.name}{range .status.conditions[*]}{"\t"}{.type}={.status} ({.reason}: {.message}){end}{"\n"}{end}"#;
        let jsonpath = format!("jsonpath={template}");
        let args = [
            "exec",
            node.as_str(),
            "kubectl",
            "--kubeconfig=/etc/kubernetes/admin.conf",
            "get",
            "nodes",
            "-o",
            jsonpath.as_str(),
        ];
        loop {
            let last = match self.tools.run_docker(&args, QUICK) {
                Ok(out) if out.ok => {
                    let nodes = parse_nodes(&out.stdout);
                    if !nodes.is_empty() && nodes.iter().all(|n| n.ready) {
                        eprintln!(
                            "xtask: kind cluster {} Ready ({} node(s), {:.0?})",
                            self.name,
                            nodes.len(),
                            start.elapsed()
                        );
                        return Ok(());
                    }
                    if nodes.is_empty() {
                        "no nodes registered".into()
                    } else {
                        nodes
                            .iter()
                            .map(|n| format!("{}: {}", n.name, n.conditions.join("; ")))
                            .collect::<Vec<_>>()
                            .join("\n  ")
                    }
                }
                Ok(out) => format!("cannot read the nodes: {}", out.summary()),
                Err(e) => format!("cannot read the nodes: {e}"),
            };
            if start.elapsed() >= limit {
                return Err(format!(
                    "kind cluster {} did not become Ready within {limit:?}; node conditions:\n  {last}",
                    self.name
                )
                .into());
            }
            std::thread::sleep(Duration::from_secs(2).min(limit));
        }
    }

    fn write_kubeconfig(&self) -> Result<(), Failure> {
        let out = self
            .tools
            .run_kind(&["get", "kubeconfig", "--name", &self.name], QUICK)?;
        if !out.ok || out.stdout.trim().is_empty() {
            return Err(format!("`kind get kubeconfig` failed: {}", out.summary()).into());
        }
        std::fs::write(&self.kubeconfig, &out.stdout)
            .map_err(|e| format!("cannot write {}: {e}", self.kubeconfig.display()))?;
        Ok(())
    }

    /// The cluster's name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// A kubeconfig (kind's: client certificate auth) for the cluster.
    pub(crate) fn kubeconfig(&self) -> &Path {
        &self.kubeconfig
    }
}

impl Drop for KindCluster {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
        if !self.created {
            return;
        }
        if self.keep {
            eprintln!(
                "xtask: keeping kind cluster {} (--keep); delete it with `kind delete cluster --name {}`",
                self.name, self.name
            );
            return;
        }
        eprintln!("xtask: kind delete cluster --name {}", self.name);
        match self
            .tools
            .run_kind(&["delete", "cluster", "--name", &self.name], DELETE)
        {
            Ok(out) if out.ok => {}
            Ok(out) => eprintln!(
                "xtask: deleting kind cluster {} failed: {}",
                self.name,
                out.summary()
            ),
            Err(e) => eprintln!("xtask: deleting kind cluster {} failed: {e}", self.name),
        }
    }
}

/// One node's readiness as the jsonpath template prints it.
#[derive(Debug, PartialEq, Eq)]
struct NodeStatus {
    name: String,
    ready: bool,
    conditions: Vec<String>,
}

/// Parses lines of `NAME\tType=Status (reason: message)\t...`.
fn parse_nodes(text: &str) -> Vec<NodeStatus> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|line| {
            let mut parts = line.split('\t');
            let name = parts.next().unwrap_or_default().trim().to_string();
            let conditions: Vec<String> = parts.map(|c| c.trim().to_string()).collect();
            let ready = conditions.iter().any(|c| c.starts_with("Ready=True"));
            NodeStatus {
                name,
                ready,
                conditions,
            }
        })
        .collect()
}

/// A finished command's exit status and output.
#[derive(Debug)]
pub(crate) struct Output {
    pub ok: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    /// The last lines of stderr (else stdout): what a person needs to see of a failure.
    pub(crate) fn summary(&self) -> String {
        let text = if self.stderr.trim().is_empty() {
            &self.stdout
        } else {
            &self.stderr
        };
        let lines: Vec<&str> = text.trim().lines().collect();
        let tail = lines[lines.len().saturating_sub(5)..].join("\n    ");
        if tail.is_empty() {
            "no output".into()
        } else {
            tail
        }
    }
}

/// Runs `cmd` to completion or kills it after `limit`.
fn run(mut cmd: Command, limit: Duration) -> Result<Output, String> {
    let what = format!(
        "`{} {}`",
        Path::new(cmd.get_program())
            .file_name()
            .unwrap_or_default()
            .to_string_lossy(),
        cmd.get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect::<Vec<_>>()
            .join(" ")
    );
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("cannot run {what}: {e}"))?;
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_string(&mut s);
            }
            s
        })
    };
    let out = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let err = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let start = Instant::now();
    let status = loop {
        match child.try_wait() {
            Ok(Some(status)) => break status,
            Ok(None) if start.elapsed() < limit => {
                std::thread::sleep(Duration::from_millis(50));
            }
            Ok(None) => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{what} did not finish within {limit:?}"));
            }
            Err(e) => return Err(format!("waiting for {what}: {e}")),
        }
    };
    Ok(Output {
        ok: status.success(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
    })
}

/// `name` as a path (when it has a `/`) or the first executable file of that name on `path`.
fn which(name: &str, path: &OsStr) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let executable = |p: &Path| {
        p.metadata()
            .map(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
            .unwrap_or(false)
    };
    if name.contains('/') {
        let p = PathBuf::from(name);
        return executable(&p).then_some(p);
    }
    std::env::split_paths(path)
        .map(|dir| dir.join(name))
        .find(|p| executable(p))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(pairs: &'static [(&'static str, &'static str)]) -> impl Fn(&str) -> Option<String> {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn defaults_without_flags_or_env() {
        let (o, rest) = KindOptions::parse(&[], env(&[])).unwrap();
        assert_eq!(
            o,
            KindOptions {
                kind: "kind".into(),
                cluster: "kcache-it".into(),
                image: None,
                keep: false
            }
        );
        assert!(rest.is_empty());
    }

    #[test]
    fn env_picks_binary_and_image_and_flags_win() {
        let e = env(&[("KIND", "/opt/kind"), ("KIND_NODE_IMAGE", "node:v1")]);
        let (o, _) = KindOptions::parse(&[], &e).unwrap();
        assert_eq!(
            (o.kind.as_str(), o.image.as_deref()),
            ("/opt/kind", Some("node:v1"))
        );
        let (o, rest) = KindOptions::parse(
            &args(&[
                "--kind",
                "/bin/k",
                "--image=img:2",
                "--cluster",
                "c-1",
                "--keep",
                "--other",
            ]),
            &e,
        )
        .unwrap();
        assert_eq!(o.kind, "/bin/k");
        assert_eq!(o.image.as_deref(), Some("img:2"));
        assert_eq!(o.cluster, "c-1");
        assert!(o.keep);
        assert_eq!(rest, args(&["--other"]));
        let (o, _) =
            KindOptions::parse(&[], env(&[("KIND", ""), ("KIND_NODE_IMAGE", " ")])).unwrap();
        assert_eq!(
            (o.kind.as_str(), o.image),
            ("kind", None),
            "empty env is unset"
        );
    }

    #[test]
    fn bad_flags_are_usage_errors() {
        for (a, needle) in [
            (&["--cluster"][..], "--cluster needs a value"),
            (&["--image", "--keep"][..], "--image needs a value"),
            (
                &["--cluster", "Bad_Name"][..],
                "invalid cluster name \"Bad_Name\"",
            ),
            (&["--kind="][..], "--kind needs a value"),
        ] {
            let e = KindOptions::parse(&args(a), env(&[])).unwrap_err();
            assert_eq!(e.code, 2, "{a:?}");
            assert!(e.message.contains(needle), "{a:?}: {}", e.message);
        }
    }

    #[test]
    fn parses_node_conditions() {
        let text = "n1\tMemoryPressure=False (KubeletHasSufficientMemory: ok)\tReady=True (KubeletReady: ready)\n\
                    n2\tReady=False (KubeletNotReady: cni not initialized)\n";
        let nodes = parse_nodes(text);
        assert_eq!(nodes.len(), 2);
        assert!(nodes[0].ready && !nodes[1].ready);
        assert_eq!(
            nodes[1].conditions,
            vec!["Ready=False (KubeletNotReady: cni not initialized)"]
        );
    }

    /// A temp dir holding fake tools (shell scripts) to put on PATH.
    struct FakeBin(PathBuf);

    impl FakeBin {
        fn new() -> FakeBin {
            FakeBin(crate::temp_dir("kcache-kind-test").unwrap())
        }
        /// Writes the tool `name`. Not with `fs::write` to its own path: a test on another
        /// thread that forks while the file is open for writing hands its child that descriptor
        /// until the child execs, and running the tool meanwhile fails with "Text file busy"
        /// (ETXTBSY). The script is written beside it and copied by a `cp` process, so the only
        /// descriptor ever open for writing the tool is that process's own.
        fn add(&self, name: &str, script: &str) -> &FakeBin {
            use std::os::unix::fs::PermissionsExt as _;
            let p = self.0.join(name);
            let source = self.0.join(format!("{name}.script"));
            std::fs::write(&source, format!("#!/bin/sh\n{script}\n")).unwrap();
            let copied = Command::new("/bin/cp")
                .arg(&source)
                .arg(&p)
                .status()
                .unwrap();
            assert!(copied.success(), "cp {} {}", source.display(), p.display());
            std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
            self
        }
        /// The fake dir plus /bin and /usr/bin (for `sh`, `sleep`), without any real kind/docker
        /// found first.
        fn path(&self) -> OsString {
            std::env::join_paths([self.0.as_path(), Path::new("/usr/bin"), Path::new("/bin")])
                .unwrap()
        }
    }

    impl Drop for FakeBin {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    const DOCKER_OK: &str = r#"case "$1" in info) echo 24.0.7;; *) exit 1;; esac"#;

    #[test]
    fn missing_kind_names_it_and_how_to_get_it() {
        let bin = FakeBin::new();
        bin.add("docker", DOCKER_OK);
        // Only the fake dir: no real kind can be found.
        let e = Tools::find("kind", bin.0.as_os_str()).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.starts_with("kind is missing (no `kind` on PATH)"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains(KIND_INSTALL) && e.message.contains("KIND="),
            "{}",
            e.message
        );
        let e = Tools::find("/nonexistent/kind", bin.0.as_os_str()).unwrap_err();
        assert!(
            e.message.contains("/nonexistent/kind does not exist"),
            "{}",
            e.message
        );
    }

    #[test]
    fn missing_docker_and_dead_daemon_are_exit_2() {
        let bin = FakeBin::new();
        bin.add("kind", "echo kind v0.11.1");
        let e = Tools::find("kind", bin.0.as_os_str()).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(e.message.starts_with("docker is missing"), "{}", e.message);
        bin.add(
            "docker",
            "echo 'Cannot connect to the Docker daemon at unix:///var/run/docker.sock' >&2; exit 1",
        );
        let e = Tools::find("kind", bin.0.as_os_str()).unwrap_err();
        assert_eq!(e.code, 2);
        assert!(
            e.message.contains("Docker daemon is not reachable")
                && e.message.contains("Cannot connect to the Docker daemon"),
            "{}",
            e.message
        );
        bin.add("docker", DOCKER_OK);
        let tools = Tools::find("kind", &bin.path()).unwrap();
        assert_eq!(tools.kind, bin.0.join("kind"));
    }

    #[test]
    fn a_hanging_command_is_cut_off() {
        let mut cmd = Command::new("/bin/sh");
        cmd.args(["-c", "sleep 30"]);
        let e = run(cmd, Duration::from_millis(200)).unwrap_err();
        assert!(e.contains("did not finish within"), "{e}");
    }

    #[test]
    fn never_ready_fails_with_the_node_conditions() {
        let bin = FakeBin::new();
        bin.add("kind", "echo kind v0.11.1").add(
            "docker",
            r#"case "$1" in info) echo 24.0.7;; exec) printf 'c-control-plane\tReady=False (KubeletNotReady: container runtime network not ready)\n';; *) exit 1;; esac"#,
        );
        let tools = Tools::find("kind", &bin.path()).unwrap();
        let cluster = KindCluster {
            tools,
            name: "c".into(),
            created: false,
            keep: false,
            kubeconfig: bin.0.join("kubeconfig"),
            dir: bin.0.join("unused"),
        };
        let e = cluster.wait_ready(Duration::from_millis(100)).unwrap_err();
        assert_eq!(e.code, 1);
        assert!(
            e.message.contains("did not become Ready within")
                && e.message.contains("c-control-plane: Ready=False (KubeletNotReady: container runtime network not ready)"),
            "{}",
            e.message
        );
    }

    #[test]
    fn reuses_an_existing_cluster_and_never_deletes_it() {
        let bin = FakeBin::new();
        let log = bin.0.join("log");
        bin.add(
            "kind",
            &format!(
                r#"echo "$@" >> {log}
case "$1 $2" in
  "version "*) echo kind v0.11.1;;
  "get clusters") echo other; echo mine;;
  "get kubeconfig") echo 'apiVersion: v1';;
  *) exit 1;;
esac"#,
                log = log.display()
            ),
        )
        .add(
            "docker",
            r#"case "$1" in info) echo 24.0.7;; exec) printf 'mine-control-plane\tReady=True (KubeletReady: ok)\n';; *) exit 1;; esac"#,
        );
        let opts = KindOptions {
            kind: "kind".into(),
            cluster: "mine".into(),
            image: None,
            keep: false,
        };
        let cluster = KindCluster::up(&opts, &bin.path()).unwrap();
        assert_eq!(
            std::fs::read_to_string(cluster.kubeconfig()).unwrap(),
            "apiVersion: v1\n"
        );
        drop(cluster);
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(
            !calls.contains("create") && !calls.contains("delete"),
            "{calls}"
        );
    }

    #[test]
    fn deletes_the_cluster_it_created_even_when_create_fails() {
        let bin = FakeBin::new();
        let log = bin.0.join("log");
        bin.add(
            "kind",
            &format!(
                r#"echo "$@" >> {log}
case "$1 $2" in
  "version "*) echo kind v0.11.1;;
  "get clusters") echo 'No kind clusters found.' >&2;;
  "create cluster") echo 'ERROR: failed to create cluster: node image not found' >&2; exit 1;;
  "delete cluster") exit 0;;
  *) exit 1;;
esac"#,
                log = log.display()
            ),
        )
        .add("docker", DOCKER_OK);
        let opts = KindOptions {
            kind: "kind".into(),
            cluster: "fresh".into(),
            image: Some("img:1".into()),
            keep: false,
        };
        let e = KindCluster::up(&opts, &bin.path()).unwrap_err();
        assert!(e.message.contains("node image not found"), "{}", e.message);
        let calls = std::fs::read_to_string(&log).unwrap();
        assert!(
            calls.contains("create cluster --name fresh --wait 120s --image img:1")
                && calls.contains("delete cluster --name fresh"),
            "{calls}"
        );
    }
}
