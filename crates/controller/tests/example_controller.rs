//! Runs `examples/controller.rs`'s demo on the embedded server: every labelled ConfigMap gets its
//! owned Secret, the unlabelled one is ignored, and a deleted Secret is put back.

#[allow(dead_code)]
#[path = "../examples/controller.rs"]
mod example;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_example_converges_and_repairs_a_deleted_secret() {
    let s = example::demo().await;
    let owners: Vec<(&str, &str)> = s
        .secrets
        .iter()
        .map(|(k, v)| (k.as_str(), v.as_str()))
        .collect();
    assert_eq!(
        owners,
        [
            ("alpha-copy", "alpha"),
            ("beta-copy", "beta"),
            ("gamma-copy", "gamma")
        ],
        "{s:?}"
    );
    assert!(
        s.reconciled.keys().all(|k| !k.ends_with("/ignored")),
        "the predicate keeps the unlabelled ConfigMap out: {s:?}"
    );
    let beta = s.reconciled.iter().find(|(k, _)| k.ends_with("/beta"));
    assert!(beta.is_some_and(|(_, n)| *n >= 2), "{s:?}");
}
