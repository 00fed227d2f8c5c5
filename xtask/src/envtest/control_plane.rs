//! etcd and kube-apiserver as child processes on loopback, always stopped on drop; with them
//! kube-controller-manager's garbage collector and namespace controller when asked for and
//! `KUBEBUILDER_ASSETS` holds a `kube-controller-manager` binary.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::certs::Credentials;

/// A running child, killed and reaped on drop (also when the run fails or panics).
struct Process {
    name: &'static str,
    child: Child,
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        eprintln!("xtask: stopped {}", self.name);
    }
}

/// The running control plane.
pub struct ControlPlane {
    // Field order is drop order: the controller manager, the API server, then etcd stop.
    _controller_manager: Option<Process>,
    _apiserver: Process,
    _etcd: Process,
    pub url: String,
}

fn free_port() -> Result<u16, String> {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("cannot find a free port: {e}"))
}

fn spawn(name: &'static str, bin: &Path, args: &[String], log: &Path) -> Result<Process, String> {
    let out =
        std::fs::File::create(log).map_err(|e| format!("cannot create {}: {e}", log.display()))?;
    let err = out.try_clone().map_err(|e| e.to_string())?;
    let child = Command::new(bin)
        .args(args)
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err)
        .spawn()
        .map_err(|e| format!("cannot start {}: {e}", bin.display()))?;
    eprintln!(
        "xtask: started {name} (pid {}, log {})",
        child.id(),
        log.display()
    );
    Ok(Process { name, child })
}

/// `curl` exit status for a GET with the token; the xtask keeps no HTTP/TLS dependencies.
fn http_ok(url: &str, creds: &Credentials) -> bool {
    Command::new("curl")
        .args(["-sf", "-o", "/dev/null", "--max-time", "2", "--cacert"])
        .arg(&creds.ca_cert)
        .args(["-H", &format!("Authorization: Bearer {}", creds.token), url])
        .status()
        .is_ok_and(|s| s.success())
}

fn wait_until(
    what: &str,
    timeout: Duration,
    mut ok: impl FnMut() -> bool,
    child: &mut Process,
    log: &Path,
) -> Result<(), String> {
    let start = Instant::now();
    while start.elapsed() < timeout {
        if ok() {
            eprintln!("xtask: {what} after {:.1}s", start.elapsed().as_secs_f64());
            return Ok(());
        }
        if let Ok(Some(status)) = child.child.try_wait() {
            return Err(format!(
                "{} exited ({status}) before {what}; see {}",
                child.name,
                log.display()
            ));
        }
        std::thread::sleep(Duration::from_millis(250));
    }
    Err(format!(
        "timed out waiting for {what}; see {}",
        log.display()
    ))
}

/// Starts etcd then kube-apiserver from `assets`, and waits until the API server is ready and
/// its bootstrap namespaces exist; then, with `controller_manager`, kube-controller-manager
/// (see [`start_controller_manager`]).
pub fn start(
    assets: &Path,
    dir: &Path,
    creds: &Credentials,
    controller_manager: bool,
) -> Result<ControlPlane, String> {
    let (client, peer, secure) = (free_port()?, free_port()?, free_port()?);
    let etcd_url = format!("http://127.0.0.1:{client}");
    let peer_url = format!("http://127.0.0.1:{peer}");
    let etcd_log = dir.join("etcd.log");
    let mut etcd = spawn(
        "etcd",
        &assets.join("etcd"),
        &[
            format!("--data-dir={}", dir.join("etcd-data").display()),
            format!("--listen-client-urls={etcd_url}"),
            format!("--advertise-client-urls={etcd_url}"),
            format!("--listen-peer-urls={peer_url}"),
            format!("--initial-advertise-peer-urls={peer_url}"),
            format!("--initial-cluster=default={peer_url}"),
            "--name=default".into(),
            "--unsafe-no-fsync=true".into(),
        ],
        &etcd_log,
    )?;
    wait_until(
        "etcd is healthy",
        Duration::from_secs(30),
        || {
            Command::new("curl")
                .args(["-sf", "-o", "/dev/null", &format!("{etcd_url}/health")])
                .status()
                .is_ok_and(|s| s.success())
        },
        &mut etcd,
        &etcd_log,
    )?;
    let p = |p: &PathBuf| p.display().to_string();
    let api_log = dir.join("kube-apiserver.log");
    let mut apiserver = spawn(
        "kube-apiserver",
        &assets.join("kube-apiserver"),
        &[
            format!("--etcd-servers={etcd_url}"),
            format!("--cert-dir={}", dir.display()),
            format!("--secure-port={secure}"),
            "--insecure-port=0".into(),
            "--bind-address=127.0.0.1".into(),
            "--advertise-address=127.0.0.1".into(),
            format!("--tls-cert-file={}", p(&creds.server_cert)),
            format!("--tls-private-key-file={}", p(&creds.server_key)),
            format!("--client-ca-file={}", p(&creds.ca_cert)),
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local".into(),
            format!("--service-account-key-file={}", p(&creds.sa_pub)),
            format!("--service-account-signing-key-file={}", p(&creds.sa_key)),
            format!("--token-auth-file={}", p(&creds.token_file)),
            "--authorization-mode=RBAC".into(),
            "--service-cluster-ip-range=10.0.0.0/24".into(),
            "--disable-admission-plugins=ServiceAccount".into(),
            "--allow-privileged=true".into(),
        ],
        &api_log,
    )?;
    let url = format!("https://127.0.0.1:{secure}");
    wait_until(
        "kube-apiserver is ready",
        Duration::from_secs(90),
        || http_ok(&format!("{url}/readyz"), creds),
        &mut apiserver,
        &api_log,
    )?;
    wait_until(
        "namespace default exists",
        Duration::from_secs(30),
        || http_ok(&format!("{url}/api/v1/namespaces/default"), creds),
        &mut apiserver,
        &api_log,
    )?;
    let controller_manager = match controller_manager {
        true => start_controller_manager(assets, dir, &url, creds)?,
        false => None,
    };
    Ok(ControlPlane {
        _controller_manager: controller_manager,
        _apiserver: apiserver,
        _etcd: etcd,
        url,
    })
}

/// The controllers of kube-controller-manager that act on every object a test creates: the
/// garbage collector (ownerReferences) and the namespace controller (a deleted namespace's
/// content, then the namespace). The others (deployments, service accounts, ...) would make
/// envtest a different tier (kind is that one).
const CONTROLLERS: &str = "garbagecollector,namespace";

/// Starts kube-controller-manager with [`CONTROLLERS`] if the assets hold it (`None`
/// otherwise), talking to the API server with the admin token, serving nothing itself.
fn start_controller_manager(
    assets: &Path,
    dir: &Path,
    url: &str,
    creds: &Credentials,
) -> Result<Option<Process>, String> {
    let bin = assets.join("kube-controller-manager");
    if !bin.is_file() {
        eprintln!(
            "xtask: no kube-controller-manager in {}: no garbage collector nor namespace controller runs",
            assets.display()
        );
        return Ok(None);
    }
    let kubeconfig = dir.join("controller-manager.kubeconfig");
    super::write_kubeconfig(&kubeconfig, url, creds)?;
    let log = dir.join("kube-controller-manager.log");
    let mut process = spawn(
        "kube-controller-manager",
        &bin,
        &[
            format!("--kubeconfig={}", kubeconfig.display()),
            format!("--controllers={CONTROLLERS}"),
            "--leader-elect=false".into(),
            "--port=0".into(),
            "--secure-port=0".into(),
        ],
        &log,
    )?;
    // It serves no health endpoint here: ready once its informers synced, which it logs.
    let synced = |log: &Path| {
        std::fs::read_to_string(log).is_ok_and(|text| {
            text.contains("Caches are synced for garbage collector")
                && text.contains("Caches are synced for namespace")
        })
    };
    wait_until(
        "kube-controller-manager's caches are synced",
        Duration::from_secs(60),
        || synced(&log),
        &mut process,
        &log,
    )?;
    Ok(Some(process))
}
