//! Runs `examples/workqueue-threads.rs`: the workqueue on plain threads, with no tokio runtime
//! anywhere in the process's test thread, and checks what its workers did.

#[allow(dead_code)]
#[path = "../examples/workqueue-threads.rs"]
mod example;

#[test]
fn workqueue_runs_on_threads_without_a_runtime() {
    assert!(
        tokio::runtime::Handle::try_current().is_err(),
        "no runtime here"
    );
    let s = example::run(3);
    let key = |i: usize| format!("default/object-{i}");
    assert_eq!(s.synced.len() + s.dropped.len(), example::KEYS, "{s:?}");
    assert_eq!(s.dropped.iter().collect::<Vec<_>>(), [&key(3)], "{s:?}");
    assert_eq!(
        s.attempts.get(&key(3)),
        Some(&(example::MAX_RETRIES + 1)),
        "tried once, retried MAX_RETRIES times"
    );
    assert_eq!(s.attempts.get(&key(7)), Some(&3), "fails twice, then syncs");
    assert!(s.synced.contains(&key(7)));
    assert!(s.rechecked.contains(&key(5)), "add_after brought it back");
    assert_eq!(s.attempts.get(&key(5)), Some(&2));
}
