//! `kcache-testserver`: run the embedded API server as a process, e.g.
//! `cargo run -p kcache-testserver -- --port 6443 --tls --seed configmaps=10000`.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use kcache_testserver::{Error, ServerConfig, TestServer};
use serde_json::json;

/// An in-memory Kubernetes API server for tests and benchmarks.
#[derive(Debug, Parser)]
#[command(name = "kcache-testserver")]
struct Args {
    /// Loopback port (0 picks a free one).
    #[arg(long, default_value_t = 0)]
    port: u16,
    /// Serve HTTPS with a generated self-signed CA.
    #[arg(long)]
    tls: bool,
    /// Require this bearer token.
    #[arg(long)]
    token: Option<String>,
    /// Where to write the kubeconfig (default: a file in the temp dir).
    #[arg(long)]
    kubeconfig: Option<PathBuf>,
    /// Pre-create objects: RESOURCE=COUNT (repeatable). `pods` are realistic deployment-style
    /// pods (~4.3 KB of JSON each, as `cgbench -scenario podlist` writes them) spread over
    /// namespaces `ns-0`…`ns-99`; other resources get small objects in namespace `default`.
    #[arg(long, value_name = "RESOURCE=COUNT")]
    seed: Vec<String>,
    /// Watch events kept per resource.
    #[arg(long, default_value_t = ServerConfig::default().history_window)]
    history_window: usize,
    /// Run no garbage collector nor namespace controller, as envtest's lone kube-apiserver
    /// (`ServerConfig::kube_controller_manager: false`); needed to create pods through the
    /// API whose owners do not exist, as `kcache-bench seed --pods` does. `--seed pods=N`
    /// implies it.
    #[arg(long)]
    no_controller_manager: bool,
}

fn seed(server: &TestServer, spec: &str) -> Result<(), Error> {
    let bad = |message: &str| Error::Option {
        option: spec.to_string(),
        message: message.to_string(),
    };
    let (plural, count) = spec
        .split_once('=')
        .ok_or_else(|| bad("expected RESOURCE=COUNT"))?;
    let count: usize = count.parse().map_err(|_| bad("COUNT is not a number"))?;
    if plural == "pods" {
        return server.seed_realistic_pods(count);
    }
    let api = server
        .api_resource(plural)
        .ok_or_else(|| bad("unknown resource"))?;
    for i in 0..count {
        let mut obj =
            json!({"metadata": {"name": format!("seed-{i}"), "labels": {"seed": "true"}}});
        if api.namespaced {
            obj["metadata"]["namespace"] = json!("default");
        }
        if plural == "configmaps" {
            obj["data"] = json!({"key": format!("value-{i}")});
        }
        server.create(&api, obj).map_err(|s| bad(&s.to_string()))?;
    }
    Ok(())
}

async fn run(args: Args) -> Result<(), Error> {
    let config = ServerConfig {
        port: args.port,
        tls: args.tls,
        token: args.token,
        history_window: args.history_window,
        // Seeded pods name ReplicaSets that are not seeded: no garbage collector may take them.
        kube_controller_manager: !args.no_controller_manager
            && !args.seed.iter().any(|s| s.starts_with("pods=")),
        ..ServerConfig::default()
    };
    let server = TestServer::start(config).await?;
    for s in &args.seed {
        seed(&server, s)?;
    }
    let path = args.kubeconfig.unwrap_or_else(|| {
        std::env::temp_dir().join(format!(
            "kcache-testserver-{}.kubeconfig",
            server.addr().port()
        ))
    });
    server.write_kubeconfig(&path)?;
    println!("{}", path.display());
    eprintln!(
        "kcache-testserver listening on {} ({} objects); Ctrl-C stops it",
        server.base_url(),
        server.object_count()
    );
    let _ = tokio::signal::ctrl_c().await;
    server.shutdown().await;
    Ok(())
}

#[tokio::main]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::from_default_env())
        .with_writer(std::io::stderr)
        .init();
    match run(Args::parse()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("kcache-testserver: {}", kcache_core::ErrorChain(&e));
            ExitCode::FAILURE
        }
    }
}
