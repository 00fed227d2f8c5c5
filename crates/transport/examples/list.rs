//! Lists one resource with kcache-transport's streaming decoder, printing each name as it is
//! decoded and then the list's resourceVersion.
//!
//! ```text
//! cargo run -p kcache-transport --example list -- [--kubeconfig FILE] [--context NAME]
//!     [-n NAMESPACE] [--group G] [--version V] [--limit N] RESOURCE
//! ```
//! RESOURCE is the plural name, e.g. `configmaps` (core group, v1 unless told otherwise).
//! Without `--kubeconfig`, the kubeconfig is found as kubectl finds it (or in-cluster).

use futures_util::StreamExt;
use kcache_core::{ApiResource, DynamicObject, ListParams, Object};
use kcache_transport::{Api, Client, Config, KubeConfigOptions, Kubeconfig};

struct Args {
    kubeconfig: Option<String>,
    context: Option<String>,
    namespace: Option<String>,
    group: String,
    version: String,
    limit: Option<i64>,
    resource: String,
}

fn parse_args() -> Result<Args, String> {
    let mut args = Args {
        kubeconfig: None,
        context: None,
        namespace: None,
        group: String::new(),
        version: "v1".into(),
        limit: None,
        resource: String::new(),
    };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        let mut value = || it.next().ok_or_else(|| format!("{a} needs a value"));
        match a.as_str() {
            "--kubeconfig" => args.kubeconfig = Some(value()?),
            "--context" => args.context = Some(value()?),
            "-n" | "--namespace" => args.namespace = Some(value()?),
            "--group" => args.group = value()?,
            "--version" => args.version = value()?,
            "--limit" => args.limit = Some(value()?.parse().map_err(|e| format!("--limit: {e}"))?),
            _ if a.starts_with('-') => return Err(format!("unknown option {a}")),
            _ => args.resource = a,
        }
    }
    if args.resource.is_empty() {
        return Err("usage: list [--kubeconfig FILE] [--context NAME] [-n NS] [--group G] [--version V] [--limit N] RESOURCE".into());
    }
    Ok(args)
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    if let Err(e) = run().await {
        eprintln!("error: {}", kcache_core::ErrorChain(&*e));
        std::process::exit(1);
    }
}

async fn run() -> Result<(), Box<dyn std::error::Error>> {
    let args = parse_args()?;
    let config = match (&args.kubeconfig, &args.context) {
        (None, None) => Config::infer()?,
        (path, context) => {
            let kc = match path {
                Some(p) => Kubeconfig::read_from(p)?,
                None => Kubeconfig::from_env()?.ok_or("no kubeconfig found")?,
            };
            let opts = KubeConfigOptions {
                context: context.clone(),
                ..KubeConfigOptions::default()
            };
            Config::from_kubeconfig(&kc, &opts)?
        }
    };
    let resource = ApiResource {
        group: args.group,
        version: args.version,
        kind: String::new(),
        plural: args.resource,
        namespaced: true,
    };
    let api: Api<DynamicObject> =
        Api::dynamic(Client::new(config)?, resource, args.namespace.as_deref());
    let params = ListParams {
        limit: args.limit,
        ..ListParams::default()
    };
    let mut items = std::pin::pin!(api.list_stream(&params).await?);
    let mut count = 0usize;
    while let Some(item) = items.next().await {
        let item = item?;
        match item.namespace() {
            Some(ns) => println!("{ns}/{}", item.name()),
            None => println!("{}", item.name()),
        }
        count += 1;
    }
    let meta = items.metadata().cloned().unwrap_or_default();
    println!(
        "{count} items, resourceVersion {}",
        meta.resource_version.as_deref().unwrap_or("")
    );
    if let Some(c) = meta.continue_.filter(|c| !c.is_empty()) {
        println!("more items: continue token {c}");
    }
    Ok(())
}
