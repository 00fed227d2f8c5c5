//! List latency (10k and 100k ConfigMaps) and watch fan-out (50 watchers) over HTTP.
//!
//! `cargo bench -p kcache-testserver --bench list_watch` measures the embedded server; with
//! `KCACHE_TEST_KUBECONFIG` set it measures that cluster instead (seeding through POSTs), so both
//! numbers come from the same client code. `KCACHE_BENCH_SIZES=10000,100000` picks list sizes.

use std::time::{Duration, Instant};

use kcache_testing::{RawClient, TestCluster};
use kcache_testserver::ServerConfig;
use serde_json::json;

async fn seed(c: &TestCluster, ns: &str, from: usize, to: usize) {
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    if let Some(server) = c.server() {
        let api = server.api_resource("configmaps").unwrap();
        for i in from..to {
            server.create(&api, json!({"metadata": {"name": format!("cm-{i:06}"), "namespace": ns, "labels": {"bench": "x"}}, "data": {"key": format!("value-{i}")}})).unwrap();
        }
        return;
    }
    let tasks: Vec<_> = (0..8)
        .map(|w| {
            let client = c.client().clone();
            let path = path.clone();
            tokio::spawn(async move {
                for i in (from + w..to).step_by(8) {
                    let body = json!({"metadata": {"name": format!("cm-{i:06}"), "labels": {"bench": "x"}}, "data": {"key": format!("value-{i}")}});
                    let r = client.post(&path, &body).await.unwrap();
                    assert!(r.status.is_success(), "{}", r.body);
                }
            })
        })
        .collect();
    for t in tasks {
        t.await.unwrap();
    }
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn list_latency(client: &RawClient, ns: &str, expect: usize) -> Duration {
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let mut times = Vec::new();
    for _ in 0..5 {
        let start = Instant::now();
        let r = client.get(&path).await.unwrap();
        times.push(start.elapsed());
        assert_eq!(r.body["items"].as_array().unwrap().len(), expect);
    }
    median(times)
}

async fn fan_out(c: &TestCluster, ns: &str, watchers: usize, events: usize) -> f64 {
    let path = format!("/api/v1/namespaces/{ns}/configmaps");
    let start_rv = c.client().get(&path).await.unwrap().body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let mut handles = Vec::new();
    for _ in 0..watchers {
        let mut w = c
            .client()
            .watch(&format!("{path}?watch=true&resourceVersion={start_rv}"))
            .await
            .unwrap()
            .unwrap();
        handles.push(tokio::spawn(async move {
            let mut n = 0;
            while n < events {
                w.next().await.unwrap().unwrap();
                n += 1;
            }
        }));
    }
    let start = Instant::now();
    let writer = c.client().clone();
    for i in 0..events {
        writer
            .post(
                &path,
                &json!({"metadata": {"name": format!("w-{i:06}")}, "data": {"k": "v"}}),
            )
            .await
            .unwrap();
    }
    for h in handles {
        h.await.unwrap();
    }
    (watchers * events) as f64 / start.elapsed().as_secs_f64()
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    let config = ServerConfig {
        history_window: 200_000,
        watcher_buffer: 10_000,
        ..ServerConfig::default()
    };
    let c = TestCluster::start_with(config).await.unwrap();
    let which = if c.is_real() {
        "kube-apiserver (KCACHE_TEST_KUBECONFIG)"
    } else {
        "kcache-testserver (embedded, TLS)"
    };
    let sizes: Vec<usize> = std::env::var("KCACHE_BENCH_SIZES")
        .unwrap_or_else(|_| "10000,100000".into())
        .split(',')
        .filter_map(|s| s.parse().ok())
        .collect();
    let ns = c.create_namespace("bench-list").await.unwrap();
    let mut seeded = 0;
    for size in sizes {
        seed(&c, &ns, seeded, size).await;
        seeded = size;
        let t = list_latency(c.client(), &ns, size).await;
        println!(
            "{which}: list {size} ConfigMaps: median {:.1} ms (5 runs)",
            t.as_secs_f64() * 1e3
        );
    }
    let ns = c.create_namespace("bench-watch").await.unwrap();
    let rate = fan_out(&c, &ns, 50, 2000).await;
    println!("{which}: watch fan-out 50 watchers x 2000 events: {rate:.0} events/s delivered");
}
