//! Runs `examples/priority-controller.rs` against the embedded server (or the cluster named by
//! KCACHE_TEST_KUBECONFIG, where its pods stay unscheduled) and checks that the pods created
//! while the initial list waited were reconciled before the rest of that backlog, and that the
//! retry and the requeue happened.

#[allow(dead_code)]
#[path = "../examples/priority-controller.rs"]
mod example;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_events_go_before_the_initial_list() {
    let s = example::demo().await;
    let names: Vec<&str> = s.order.iter().map(String::as_str).collect();
    assert!(
        example::INITIAL.contains(&names[0]),
        "the first reconcile is of the initial list: {s:?}"
    );
    assert_eq!(
        &names[1..3],
        example::LATER,
        "priority 0 before the rest of the low-priority initial list: {s:?}"
    );
    let mut initial: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| example::INITIAL.contains(n))
        .collect();
    initial.sort_unstable();
    assert_eq!(initial, example::INITIAL, "each initial pod once: {s:?}");
    assert!(!names.contains(&example::MARKER), "filtered out: {s:?}");
    assert_eq!(s.failures.get("flaky-0"), Some(&1));
    for twice in ["flaky-0", "new-0"] {
        assert_eq!(
            names.iter().filter(|n| **n == twice).count(),
            2,
            "{twice} retried or requeued: {s:?}"
        );
    }
}
