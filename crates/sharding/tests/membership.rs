//! Shard Leases against kcache-testserver: replicas join the ring, a graceful stop releases the
//! Lease (gone at once, after the work stopped), and a replica cut off from the server stops its
//! work before its Lease is seen expired. Real time with scaled-down durations (lease 3 s, renew
//! deadline 1.2 s, retry 0.25 s), as kcache-leaderelection's chaos test; waits are on conditions.

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use kcache_leaderelection::{CancellationToken, LeaderCallbacks, LeaderElectionConfig};
use kcache_sharding::{list_shards, live_shards, Ring, ShardLease, RING_LABEL};
use kcache_testing::{Failure, RequestMatch, TestCluster};
use kcache_transport::{Client, Config};
use parking_lot::Mutex;

/// When one term of a replica's work started, and ended if it did.
type Term = (Instant, Option<Instant>);

/// A replica's terms.
#[derive(Clone, Default)]
struct Terms(Arc<Mutex<Vec<Term>>>);

impl Terms {
    fn callbacks(&self) -> LeaderCallbacks {
        let terms = self.clone();
        LeaderCallbacks::new(move |lost: CancellationToken| {
            let terms = terms.clone();
            async move {
                let i = {
                    let mut t = terms.0.lock();
                    t.push((Instant::now(), None));
                    t.len() - 1
                };
                lost.cancelled().await;
                terms.0.lock()[i].1 = Some(Instant::now());
            }
        })
    }

    fn acting(&self) -> bool {
        self.0.lock().last().is_some_and(|t| t.1.is_none())
    }

    fn last_end(&self) -> Option<Instant> {
        self.0.lock().last().and_then(|t| t.1)
    }
}

fn client(cluster: &TestCluster, agent: &str) -> Client {
    let mut config = Config::from_kubeconfig_file(cluster.kubeconfig_path()).expect("kubeconfig");
    config.qps = 0.0;
    config.max_retries = 0;
    config.request_timeout = Some(Duration::from_millis(1200));
    config.user_agent = Some(agent.to_string());
    Client::new(config).expect("client")
}

struct Replica {
    terms: Terms,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

fn start(cluster: &TestCluster, ring: &Ring, name: &str) -> Replica {
    let mut le = LeaderElectionConfig::new(name);
    le.lease_duration = Duration::from_secs(3);
    le.renew_deadline = Duration::from_millis(1200);
    le.retry_period = Duration::from_millis(250);
    let terms = Terms::default();
    let agent = format!("sharding-test/{name}");
    let lease = ShardLease::new(client(cluster, &agent), ring, le, terms.callbacks())
        .expect("valid durations");
    assert_eq!(lease.identity(), name);
    let stop = CancellationToken::new();
    let s = stop.clone();
    let task = tokio::spawn(async move { lease.run(s).await });
    Replica { terms, stop, task }
}

async fn live(observer: &Client, ring: &Ring) -> Vec<String> {
    let shards = list_shards(observer, ring)
        .await
        .expect("list shard leases");
    live_shards(&shards, SystemTime::now())
}

async fn until<F: std::future::Future<Output = bool>>(what: &str, mut f: impl FnMut() -> F) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !f().await {
        assert!(Instant::now() < deadline, "{what}: not within 20 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn replicas_join_and_a_graceful_stop_leaves_at_once() {
    let cluster = TestCluster::start().await.unwrap();
    let ns = cluster.create_namespace("ring").await.unwrap();
    let ring = Ring::new("foos", &ns);
    let observer = client(&cluster, "sharding-test/observer");
    let a = start(&cluster, &ring, "replica-a");
    let b = start(&cluster, &ring, "replica-b");
    // A replica acts once its lease callback ran, which may be just after the server holds
    // its Lease.
    until("both shards live and acting", || async {
        live(&observer, &ring).await == ["replica-a", "replica-b"]
            && a.terms.acting()
            && b.terms.acting()
    })
    .await;
    // The Leases carry the ring's label (that is how they were listed) and hold their own name.
    let shards = list_shards(&observer, &ring).await.unwrap();
    assert!(shards.iter().all(|s| s.record.holder_identity == s.name));
    assert_eq!(ring.lease_labels()[RING_LABEL], "foos");
    // A Lease of another ring is not a member.
    let other = Ring::new("bars", &ns);
    let c = start(&cluster, &other, "replica-c");
    until("the other ring's shard live", || async {
        live(&observer, &other).await == ["replica-c"]
    })
    .await;
    assert_eq!(live(&observer, &ring).await, ["replica-a", "replica-b"]);

    a.stop.cancel();
    a.task.await.unwrap();
    // Released when `run` returns, and the work had stopped before that.
    assert!(!a.terms.acting());
    assert_eq!(live(&observer, &ring).await, ["replica-b"]);
    for r in [b, c] {
        r.stop.cancel();
        r.task.await.unwrap();
    }
    assert!(live(&observer, &ring).await.is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cut_off_replica_stops_before_its_lease_is_seen_gone_and_rejoins() {
    let cluster = TestCluster::start().await.unwrap();
    let Some(server) = cluster.server() else {
        println!("kcache-skip: shard lease cut-off: needs the embedded server's fault injection");
        return;
    };
    let ns = cluster.create_namespace("ring").await.unwrap();
    let ring = Ring::new("foos", &ns);
    let observer = client(&cluster, "sharding-test/observer");
    let a = start(&cluster, &ring, "replica-a");
    until("the shard live", || async {
        live(&observer, &ring).await == ["replica-a"]
    })
    .await;
    server.fail_next(
        usize::MAX,
        RequestMatch::any().user_agent_contains("sharding-test/replica-a"),
        Failure::ServiceUnavailable {
            retry_after_seconds: 1,
        },
    );
    until("the shard seen gone", || async {
        live(&observer, &ring).await.is_empty()
    })
    .await;
    let seen_gone = Instant::now();
    let stopped = a
        .terms
        .last_end()
        .expect("the cut-off shard stopped its work");
    assert!(
        stopped < seen_gone,
        "the shard acted until {:?} after it was seen gone",
        stopped - seen_gone
    );
    server.clear_faults();
    until("the shard back", || async {
        live(&observer, &ring).await == ["replica-a"] && a.terms.acting()
    })
    .await;
    assert_eq!(a.terms.0.lock().len(), 2, "a second term after rejoining");
    a.stop.cancel();
    a.task.await.unwrap();
}
