//! Drivers for the `informer` scenario's server: `seed` creates realistic pods (`--pods`, for
//! `informer --resource pods` on a real API server) and ConfigMaps `bench-{i}` in
//! namespace `default`, each with `data-bytes` bytes of data (about 300 by default, the size
//! the informer scenario is defined with); `churn` modifies them (a merge patch of `data.rev` to a value unique to
//! the run, cycling over the seeded objects) so a running informer receives that many update notifications. Both keep
//! `concurrency` requests in flight and print one JSON line.

use std::path::PathBuf;
use std::time::Instant;

use futures_util::stream::{self, StreamExt};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace, Pod, ServiceAccount};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_core::Resource;
use kcache_transport::{Api, Patch, PatchParams, PostParams};
use serde_json::json;

use crate::client;

/// Namespace of the seeded objects; it exists on every server.
const NAMESPACE: &str = "default";

/// Flags of `seed`.
#[derive(clap::Args)]
pub struct SeedArgs {
    /// The kubeconfig of the server to seed.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// ConfigMaps to create (`bench-0` …); ones that already exist are left as they are.
    #[arg(long, default_value_t = 0)]
    configmaps: usize,
    /// Realistic pods to create (kcache-testserver's `realistic_pod`, the shape of
    /// `cgbench -scenario podlist`'s fixture; the server resets their status), with their
    /// namespaces `ns-0`… and each namespace's `default` ServiceAccount (which pod admission
    /// requires and no controller manager creates on a bare API server).
    #[arg(long, default_value_t = 0)]
    pods: usize,
    /// Bytes of data in each ConfigMap.
    #[arg(long, default_value_t = 300)]
    data_bytes: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

/// Flags of `churn`.
#[derive(clap::Args)]
pub struct ChurnArgs {
    /// The kubeconfig of the server whose ConfigMaps to modify.
    #[arg(long)]
    kubeconfig: PathBuf,
    /// Modifications to make; each changes an object, so each is one update notification.
    #[arg(long)]
    updates: usize,
    /// How many of the seeded ConfigMaps (`bench-0` …) to cycle over.
    #[arg(long, default_value_t = 10_000)]
    configmaps: usize,
    /// Requests in flight.
    #[arg(long, default_value_t = 32)]
    concurrency: usize,
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio runtime")
}

/// The seeded object `i`: `data-bytes` bytes in four values, like a small application config.
fn seeded(i: usize, data_bytes: usize) -> ConfigMap {
    let part = data_bytes / 4;
    let data = (0..4)
        .map(|k| {
            let mut value = format!("{i}-{k}-");
            value.extend(std::iter::repeat_n(
                'x',
                part.saturating_sub(value.len() + 6),
            ));
            (format!("key-{k}"), value)
        })
        .collect();
    ConfigMap {
        metadata: ObjectMeta {
            name: Some(format!("bench-{i}")),
            namespace: Some(NAMESPACE.into()),
            labels: Some([("app".to_string(), format!("app-{}", i % 100))].into()),
            ..ObjectMeta::default()
        },
        data: Some(data),
        ..ConfigMap::default()
    }
}

/// Runs `op` for `0..n` with `concurrency` in flight; returns (successes, seconds), exiting on
/// the first error that `tolerated` does not accept.
async fn drive<F, Fut>(
    what: &str,
    n: usize,
    concurrency: usize,
    op: F,
    tolerated: fn(&kcache_core::Error) -> bool,
) -> (usize, f64)
where
    F: Fn(usize) -> Fut,
    Fut: std::future::Future<Output = Result<(), kcache_core::Error>>,
{
    let start = Instant::now();
    let mut done = 0;
    let mut results = stream::iter(0..n)
        .map(op)
        .buffer_unordered(concurrency.max(1));
    while let Some(result) = results.next().await {
        match result {
            Ok(()) => done += 1,
            Err(e) if tolerated(&e) => {}
            Err(e) => {
                eprintln!("kcache-bench {what}: {}", kcache_core::ErrorChain(&e));
                std::process::exit(1)
            }
        }
    }
    (done, start.elapsed().as_secs_f64())
}

/// `kcache-bench seed`.
pub fn seed(args: SeedArgs) {
    runtime().block_on(async {
        if args.pods > 0 {
            seed_pods(&args).await;
        }
        if args.configmaps == 0 {
            return;
        }
        let api =
            Api::<ConfigMap>::namespaced(client::from_kubeconfig(&args.kubeconfig), NAMESPACE);
        let post = PostParams::default();
        let (created, seconds) = drive(
            "seed",
            args.configmaps,
            args.concurrency,
            |i| {
                let (api, post, obj) = (&api, &post, seeded(i, args.data_bytes));
                async move { api.create(post, &obj).await.map(drop) }
            },
            kcache_core::Error::is_conflict,
        )
        .await;
        println!(
            "{}",
            json!({"command": "seed", "configmaps": args.configmaps, "created": created,
                   "data_bytes": args.data_bytes, "seconds": seconds})
        );
    });
}

/// Creates `args.pods` realistic pods, their namespaces and ServiceAccounts.
async fn seed_pods(args: &SeedArgs) {
    let client = client::from_kubeconfig(&args.kubeconfig);
    let namespaces = Api::<Namespace>::all(client.clone());
    let post = PostParams::default();
    let spread = kcache_testserver::POD_NAMESPACES.min(args.pods);
    drive(
        "seed",
        spread,
        args.concurrency,
        |n| {
            let (namespaces, post, client) = (&namespaces, &post, client.clone());
            async move {
                let name = format!("ns-{n}");
                let ns = Namespace {
                    metadata: ObjectMeta {
                        name: Some(name.clone()),
                        ..ObjectMeta::default()
                    },
                    ..Namespace::default()
                };
                match namespaces.create(post, &ns).await {
                    Err(e) if !e.is_conflict() => return Err(e),
                    _ => {}
                }
                let sa = ServiceAccount {
                    metadata: ObjectMeta {
                        name: Some("default".into()),
                        ..ObjectMeta::default()
                    },
                    ..ServiceAccount::default()
                };
                Api::<ServiceAccount>::namespaced(client, &name)
                    .create(post, &sa)
                    .await
                    .map(drop)
            }
        },
        kcache_core::Error::is_conflict,
    )
    .await;
    let (created, seconds) = drive(
        "seed",
        args.pods,
        args.concurrency,
        |i| {
            let mut pod = kcache_testserver::realistic_pod(i);
            let ns = pod["metadata"]["namespace"]
                .as_str()
                .unwrap_or_default()
                .to_string();
            let api =
                Api::<serde_json::Value>::dynamic(client.clone(), Pod::api_resource(), Some(&ns));
            if let Some(meta) = pod["metadata"].as_object_mut() {
                meta.remove("uid");
            }
            let post = &post;
            async move { api.create(post, &pod).await.map(drop) }
        },
        kcache_core::Error::is_conflict,
    )
    .await;
    println!(
        "{}",
        json!({"command": "seed", "pods": args.pods, "created": created, "seconds": seconds})
    );
}

/// `kcache-bench churn`.
pub fn churn(args: ChurnArgs) {
    runtime().block_on(async {
        let api =
            Api::<ConfigMap>::namespaced(client::from_kubeconfig(&args.kubeconfig), NAMESPACE);
        let params = PatchParams::default();
        let cycle = args.configmaps.max(1);
        // Unique per run: a value an object already holds would be a no-op patch, which the
        // server does not turn into a watch event.
        let run_id = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        let (updated, seconds) = drive(
            "churn",
            args.updates,
            args.concurrency,
            |j| {
                let (api, params) = (&api, &params);
                let patch = Patch::Merge(json!({"data": {"rev": format!("{run_id}-{j}")}}));
                async move {
                    api.patch(&format!("bench-{}", j % cycle), params, &patch)
                        .await
                        .map(drop)
                }
            },
            |_| false,
        )
        .await;
        println!(
            "{}",
            json!({"command": "churn", "updates": updated, "seconds": seconds,
                   "updates_per_sec": updated as f64 / seconds})
        );
    });
}

#[cfg(test)]
mod tests {
    use super::seeded;

    #[test]
    fn seeded_objects_carry_about_the_requested_data() {
        for i in [0, 7, 99_999] {
            let cm = seeded(i, 300);
            let bytes: usize = cm
                .data
                .as_ref()
                .unwrap()
                .iter()
                .map(|(k, v)| k.len() + v.len())
                .sum();
            assert!((280..=320).contains(&bytes), "object {i}: {bytes} bytes");
            assert_eq!(
                cm.metadata.name.as_deref(),
                Some(format!("bench-{i}").as_str())
            );
        }
    }
}
