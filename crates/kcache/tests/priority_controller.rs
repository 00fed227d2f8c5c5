//! Runs `examples/priority-controller.rs` against the embedded server (or the cluster named by
//! KCACHE_TEST_KUBECONFIG, where its pods stay unscheduled) and checks that events
//! after the initial list were reconciled first, and that retries and requeues kept priorities.

#[allow(dead_code)]
#[path = "../examples/priority-controller.rs"]
mod example;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_events_go_before_the_initial_list() {
    let s = example::demo().await;
    let names: Vec<&str> = s.order.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(
        &names[..2],
        example::LATER,
        "priority 0 before the low-priority initial list: {s:?}"
    );
    for (name, priority) in &s.order {
        let initial = example::INITIAL.contains(&name.as_str());
        let expected = if initial { example::LOW_PRIORITY } else { 0 };
        assert_eq!(*priority, expected, "{name}: {s:?}");
    }
    let mut initial: Vec<&str> = names
        .iter()
        .copied()
        .filter(|n| example::INITIAL.contains(n))
        .collect();
    initial.sort_unstable();
    assert_eq!(initial, example::INITIAL, "each initial pod once: {s:?}");
    assert_eq!(s.failures.get("flaky-0"), Some(&1));
    for twice in ["flaky-0", "new-0"] {
        assert_eq!(
            names.iter().filter(|n| **n == twice).count(),
            2,
            "{twice} retried or requeued: {s:?}"
        );
    }
}
