//! The `patch-floor` scenario: the least `latency_req` any client can have in the `controller`
//! scenario on a given server, to read the controllers' figures against.
//!
//! The same patches as `controller` — `updates` merge patches, one at a time, each awaited,
//! round-robin over the namespace's ConfigMaps (their names sorted), setting
//! `metadata.labels.kcache-bench-seq` to `<run start unix seconds>-<i>` — with no controller:
//! the patches go over HTTP/1.1 on a TLS connection of their own, and a watch of the namespace
//! from the current resourceVersion on another is read by a thread blocked in `read`. An
//! update's latency ends at the `read` that returns the watch bytes naming its value: nothing
//! is decoded, cached, queued or reconciled, and no task or runtime stands between the socket
//! and the clock. (HTTP/1.1 because it is the cheaper floor: over HTTP/2 both streams share one
//! connection, and its frames pass through one more writer on each side.) A controller's
//! `latency_req` above this floor is what its client, cache, queue and workers add; the server's
//! part is below it.
//!
//! Authentication: the kubeconfig's token (or token file) or client certificate; the server
//! must be `https` with the kubeconfig's CA.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::ListParams;
use kcache_transport::{Api, Config};
use parking_lot::Mutex;
use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, RootCertStore, StreamOwned};
use serde_json::json;

use crate::controller::{list_names, ms_between, percentile, Target, SEQ_LABEL};
use crate::report::emit;

/// Flags, as `controller`'s.
#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    target: Target,
    /// Merge patches, one at a time.
    #[arg(long, default_value_t = 1000)]
    updates: usize,
}

type Tls = StreamOwned<ClientConnection, TcpStream>;

/// How long the last patch's watch event may take before the stragglers count as missed.
const STRAGGLERS: Duration = Duration::from_secs(30);

pub fn run(args: Args) {
    let fail = |what: &str, e: String| -> ! {
        eprintln!("kcache-bench: patch-floor: {what}: {e}");
        std::process::exit(1)
    };
    let config = Config::from_kubeconfig_file(&args.target.kubeconfig).unwrap_or_else(|e| {
        fail(
            &format!("kubeconfig {}", args.target.kubeconfig.display()),
            kcache_core::ErrorChain(&e).to_string(),
        )
    });
    let server = Server::new(&config).unwrap_or_else(|e| fail("server", e));
    let (names, rv) = names_and_version(&args.target);
    let run = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());

    let watch = server.connect().unwrap_or_else(|e| fail("connect", e));
    let watch_socket = watch.sock.try_clone().expect("clone the watch socket");
    let path = format!(
        "/api/v1/namespaces/{}/configmaps?watch=1&resourceVersion={rv}",
        args.target.namespace
    );
    let arrivals = Arc::new(Mutex::new(Arrivals::default()));
    let reader = {
        let mut watch = watch;
        let arrivals = arrivals.clone();
        server
            .send(&mut watch, "GET", &path, None)
            .unwrap_or_else(|e| fail("watch", e));
        std::thread::spawn(move || arrivals_of(watch, &arrivals))
    };

    let mut patches = BufReader::new(server.connect().unwrap_or_else(|e| fail("connect", e)));
    let updates = if names.is_empty() { 0 } else { args.updates };
    let (mut issued, mut returned) = (Vec::with_capacity(updates), Vec::with_capacity(updates));
    let t0 = Instant::now();
    for i in 0..updates {
        let name = &names[i % names.len()];
        let path = format!(
            "/api/v1/namespaces/{}/configmaps/{name}",
            args.target.namespace
        );
        let body = json!({"metadata": {"labels": {SEQ_LABEL: format!("{run}-{i}")}}}).to_string();
        issued.push(Instant::now());
        server
            .send(patches.get_mut(), "PATCH", &path, Some(&body))
            .unwrap_or_else(|e| fail("patch", e));
        let status = read_response(&mut patches).unwrap_or_else(|e| fail("patch response", e));
        returned.push(Instant::now());
        if status != 200 {
            fail("patch", format!("{name}: status {status}"));
        }
    }
    let patch_seconds = t0.elapsed().as_secs_f64();

    let needle = |i: usize| format!("\"{SEQ_LABEL}\":\"{run}-{i}\"");
    let deadline = Instant::now() + STRAGGLERS;
    while let Some(last) = updates.checked_sub(1) {
        if arrivals.lock().find(&needle(last), issued[last]).is_some() || Instant::now() > deadline
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = watch_socket.shutdown(Shutdown::Both);
    let _ = reader.join();

    let arrivals = arrivals.lock();
    let (mut lat, mut lat_req) = (Vec::new(), Vec::new());
    for i in 0..updates {
        if let Some(t) = arrivals.find(&needle(i), issued[i]) {
            lat.push(ms_between(t, returned[i]));
            lat_req.push(ms_between(t, issued[i]));
        }
    }
    let missed = updates - lat.len();
    lat.sort_by(f64::total_cmp);
    lat_req.sort_by(f64::total_cmp);
    emit(
        "patch-floor",
        json!({
            "objects": names.len(), "updates": updates, "patch_seconds": patch_seconds,
            "latency_p50_ms": percentile(&lat, 0.5), "latency_p99_ms": percentile(&lat, 0.99),
            "latency_req_p50_ms": percentile(&lat_req, 0.5),
            "latency_req_p90_ms": percentile(&lat_req, 0.9),
            "latency_req_p99_ms": percentile(&lat_req, 0.99),
            "missed": missed, "protocol": "http/1.1",
        }),
    );
}

/// The names the controller scenario patches, in its order, and the resourceVersion to watch
/// from (a list's, after them), read with the bench's client as the controller scenario's.
fn names_and_version(target: &Target) -> (Vec<String>, String) {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("tokio runtime");
    runtime.block_on(async {
        let client = crate::client::from_kubeconfig(&target.kubeconfig);
        let api = Api::<ConfigMap>::namespaced(client, &target.namespace);
        let mut names = list_names(&api).await;
        names.sort_unstable();
        let one = ListParams {
            limit: Some(1),
            ..Default::default()
        };
        let list = api.list(&one).await.unwrap_or_else(|e| {
            eprintln!(
                "kcache-bench: patch-floor: list: {}",
                kcache_core::ErrorChain(&e)
            );
            std::process::exit(1)
        });
        (names, list.metadata.resource_version.unwrap_or_default())
    })
}

/// Where and how to reach the server: its address, TLS settings and `Authorization` header.
struct Server {
    addr: (String, u16),
    host: String,
    name: ServerName<'static>,
    tls: Arc<ClientConfig>,
    authorization: Option<String>,
}

impl Server {
    fn new(config: &Config) -> Result<Server, String> {
        let url = &config.cluster_url;
        if url.scheme_str() != Some("https") {
            return Err(format!("{url}: only an https server is measured"));
        }
        let host = url.host().ok_or("the server URL has no host")?;
        let bare = host
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let name = config
            .tls_server_name
            .clone()
            .unwrap_or_else(|| bare.clone());
        let name = ServerName::try_from(name).map_err(|e| format!("server name: {e}"))?;
        if !url.path().trim_matches('/').is_empty() {
            return Err(format!("{url}: a server URL with a path is not measured"));
        }
        let mut roots = RootCertStore::empty();
        let certs = config
            .root_certs
            .as_ref()
            .ok_or("the kubeconfig names no certificate authority")?;
        for cert in certs {
            roots.add(cert.clone()).map_err(|e| format!("CA: {e}"))?;
        }
        let provider = Arc::new(rustls::crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(|e| e.to_string())?
            .with_root_certificates(roots);
        let auth = &config.auth;
        let tls = match &auth.identity {
            Some(id) => builder
                .with_client_auth_cert(id.certs.clone(), id.key.clone_key())
                .map_err(|e| format!("client certificate: {e}"))?,
            None => builder.with_no_client_auth(),
        };
        let token = match (&auth.token, &auth.token_file) {
            (Some(t), _) => Some(t.expose().to_string()),
            (None, Some(f)) => Some(
                std::fs::read_to_string(f)
                    .map_err(|e| format!("token file {}: {e}", f.display()))?
                    .trim()
                    .to_string(),
            ),
            (None, None) => None,
        };
        if token.is_none() && auth.identity.is_none() {
            return Err("the kubeconfig user has neither a token nor a client certificate".into());
        }
        Ok(Server {
            addr: (bare, url.port_u16().unwrap_or(443)),
            host: host.to_string(),
            name,
            tls: Arc::new(tls),
            authorization: token.map(|t| format!("Bearer {t}")),
        })
    }

    fn connect(&self) -> Result<Tls, String> {
        let tcp = TcpStream::connect((self.addr.0.as_str(), self.addr.1))
            .map_err(|e| format!("{}:{}: {e}", self.addr.0, self.addr.1))?;
        tcp.set_nodelay(true).map_err(|e| e.to_string())?;
        tcp.set_read_timeout(Some(STRAGGLERS))
            .map_err(|e| e.to_string())?;
        let conn = ClientConnection::new(self.tls.clone(), self.name.clone())
            .map_err(|e| e.to_string())?;
        Ok(StreamOwned::new(conn, tcp))
    }

    /// Writes one HTTP/1.1 request, flushed as one TLS write.
    fn send(
        &self,
        tls: &mut Tls,
        method: &str,
        path: &str,
        body: Option<&str>,
    ) -> Result<(), String> {
        let mut req = format!("{method} {path} HTTP/1.1\r\nHost: {}\r\nAccept: application/json\r\nUser-Agent: kcache-bench/patch-floor\r\n", self.host);
        if let Some(a) = &self.authorization {
            req += &format!("Authorization: {a}\r\n");
        }
        if let Some(body) = body {
            req += &format!(
                "Content-Type: application/merge-patch+json\r\nContent-Length: {}\r\n\r\n{body}",
                body.len()
            );
        } else {
            req += "\r\n";
        }
        tls.write_all(req.as_bytes())
            .and_then(|()| tls.flush())
            .map_err(|e| e.to_string())
    }
}

/// Reads one HTTP/1.1 response (`Content-Length` or chunked), returning its status.
fn read_response(r: &mut BufReader<Tls>) -> Result<u16, String> {
    let mut line = String::new();
    read_line(r, &mut line)?;
    let status = line
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| format!("not an HTTP status line: {line:?}"))?;
    let (mut length, mut chunked) = (0, false);
    loop {
        read_line(r, &mut line)?;
        let header = line.trim_end().to_ascii_lowercase();
        if header.is_empty() {
            break;
        }
        if let Some(v) = header.strip_prefix("content-length:") {
            length = v.trim().parse().map_err(|_| format!("bad {header:?}"))?;
        }
        chunked |= header.starts_with("transfer-encoding:") && header.contains("chunked");
    }
    if !chunked {
        skip(r, length)?;
        return Ok(status);
    }
    loop {
        read_line(r, &mut line)?;
        let n =
            usize::from_str_radix(line.trim(), 16).map_err(|_| format!("bad chunk {line:?}"))?;
        skip(r, n + 2)?;
        if n == 0 {
            return Ok(status);
        }
    }
}

fn read_line(r: &mut BufReader<Tls>, line: &mut String) -> Result<(), String> {
    line.clear();
    match r.read_line(line) {
        Ok(0) => Err("the server closed the connection".into()),
        Ok(_) => Ok(()),
        Err(e) => Err(e.to_string()),
    }
}

fn skip(r: &mut BufReader<Tls>, n: usize) -> Result<(), String> {
    let copied = std::io::copy(&mut r.take(n as u64), &mut std::io::sink());
    match copied {
        Ok(c) if c == n as u64 => Ok(()),
        Ok(_) => Err("the server closed the connection".into()),
        Err(e) => Err(e.to_string()),
    }
}

/// Every byte the watch returned, and when each `read` returned.
#[derive(Default)]
struct Arrivals {
    bytes: Vec<u8>,
    /// (when, end offset in `bytes`) per `read`.
    reads: Vec<(Instant, usize)>,
}

impl Arrivals {
    /// When the `read` ending `needle`'s first occurrence in the bytes read after `since`
    /// returned.
    fn find(&self, needle: &str, since: Instant) -> Option<Instant> {
        let first = self.reads.partition_point(|&(t, _)| t < since);
        let from = first.checked_sub(1).map_or(0, |k| self.reads[k].1);
        let at = memchr::memmem::find(&self.bytes[from..], needle.as_bytes())?;
        let end = from + at + needle.len();
        let k = self.reads.partition_point(|&(_, e)| e < end);
        self.reads.get(k).map(|&(t, _)| t)
    }
}

/// Reads the watch until it ends, recording each `read`.
fn arrivals_of(mut watch: Tls, arrivals: &Mutex<Arrivals>) {
    let mut buf = vec![0u8; 64 * 1024];
    while let Ok(n @ 1..) = watch.read(&mut buf) {
        let now = Instant::now();
        let mut a = arrivals.lock();
        a.bytes.extend_from_slice(&buf[..n]);
        let end = a.bytes.len();
        a.reads.push((now, end));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_seen_at_the_read_that_ends_it_and_only_after_its_patch() {
        let t = Instant::now();
        let at = |ms| t + Duration::from_millis(ms);
        let mut a = Arrivals::default();
        for (ms, chunk) in [
            (1, r#"{"kcache-bench-seq":"7-1"}"#),
            (2, r#"{"kcache-bench-seq":"7-"#),
            (3, r#"2"}{"kcache-bench-seq":"7-1"}"#),
        ] {
            a.bytes.extend_from_slice(chunk.as_bytes());
            a.reads.push((at(ms), a.bytes.len()));
        }
        let needle = |v: &str| format!("\"kcache-bench-seq\":\"{v}\"");
        // Split over two reads: seen when the second returned.
        assert_eq!(a.find(&needle("7-2"), at(2)), Some(at(3)));
        // An earlier event with the same value does not count once the patch was sent after it.
        assert_eq!(a.find(&needle("7-1"), t), Some(at(1)));
        assert_eq!(a.find(&needle("7-1"), at(2)), Some(at(3)));
        assert_eq!(a.find(&needle("7-3"), t), None);
    }
}
