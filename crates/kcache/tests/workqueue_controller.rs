//! Runs `examples/workqueue-controller.rs` against the embedded server (or the cluster named by
//! KCACHE_TEST_KUBECONFIG: envtest, or a full kind cluster whose kubelet runs the pods) and
//! checks what it reconciled.

#[allow(dead_code)]
#[path = "../examples/workqueue-controller.rs"]
mod example;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn workqueue_controller_reconciles_churn() {
    let s = example::demo(2).await;
    let ns = s
        .synced
        .iter()
        .next()
        .expect("something synced")
        .split('/')
        .next()
        .unwrap()
        .to_string();
    let key = |n: &str| format!("{ns}/{n}");
    for name in ["web-0", "web-1", "flaky-0"] {
        assert!(s.synced.contains(&key(name)), "{name} synced: {s:?}");
    }
    assert!(
        s.gone.contains(&key("web-2")),
        "the deleted pod was seen gone: {s:?}"
    );
    assert_eq!(
        s.failures.get(&key("flaky-0")),
        Some(&2),
        "flaky fails twice, then syncs"
    );
    // Broken is tried once and retried MAX_RETRIES times, then dropped. On a full cluster the
    // scheduler and kubelet update the pods too (bound, running): each update of broken-0
    // enqueues it again for further failures, so there the count is a lower bound.
    let broken = s.failures.get(&key("broken-0")).copied().unwrap_or(0);
    if s.notifications[1] == 1 {
        assert_eq!(broken, example::MAX_RETRIES + 1, "{s:?}");
    } else {
        assert!(broken > example::MAX_RETRIES, "{s:?}");
    }
    assert!(s.dropped.contains(&key("broken-0")) && s.dropped.len() == 1);
    assert_eq!(s.notifications[0], 5, "five adds");
    assert!(
        s.notifications[1] >= 1 && s.notifications[2] == 1,
        "{:?}",
        s.notifications
    );
}
