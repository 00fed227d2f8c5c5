//! Runs `examples/controller.rs`'s demo on the embedded server: every labelled ConfigMap gets its
//! owned Secret, the unlabelled one is ignored, a deleted Secret is put back, and a deleted
//! ConfigMap's Secret is deleted by the finalizer's cleanup before the ConfigMap goes.

#[allow(dead_code)]
#[path = "../examples/controller.rs"]
mod example;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_converges_repairs_a_deleted_secret_and_cleans_up() {
    let s = example::demo().await;
    // The controller's copies (a full cluster also holds the ServiceAccount's token Secret).
    let owners: Vec<(&str, &str)> = s
        .secrets
        .iter()
        .filter(|(k, _)| k.ends_with("-copy"))
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        owners,
        [("alpha-copy", "alpha"), ("beta-copy", "beta")],
        "gamma-copy deleted by the cleanup: {s:?}"
    );
    assert!(
        s.reconciled.keys().all(|k| !k.ends_with("/ignored")),
        "the predicate keeps the unlabelled ConfigMap out: {s:?}"
    );
    assert!(
        s.gamma_gone,
        "the finalizer was removed after the cleanup: {s:?}"
    );
    let key = |name: &str| format!("{}/{name}", s.namespace);
    assert!(s.reconciled.contains_key(&key("gamma cleaned up")), "{s:?}");
    let beta = s.reconciled.get(&key("beta"));
    assert!(beta.is_some_and(|n| *n >= 2), "{s:?}");
}
