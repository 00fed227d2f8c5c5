//! `finalizer`, mirroring kube-runtime's finalizer rules against the API server: add before
//! acting, cleanup before removing, objects going without our finalizer left alone, and the
//! `test` guards refusing a stale view.

use std::sync::Arc;

use k8s_openapi::api::core::v1::ConfigMap;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kcache_controller::finalizer::{finalizer, Error, Event};
use kcache_transport::{Api, DeleteParams, PostParams};
use parking_lot::Mutex;

use crate::helpers::{cluster, Failed};

const NAME: &str = "example.com/cleanup";

async fn create(api: &Api<ConfigMap>, name: &str, finalizers: &[&str]) -> Arc<ConfigMap> {
    let cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some(name.into()),
            finalizers: (!finalizers.is_empty())
                .then(|| finalizers.iter().map(|f| f.to_string()).collect()),
            ..ObjectMeta::default()
        },
        ..ConfigMap::default()
    };
    Arc::new(api.create(&PostParams::default(), &cm).await.unwrap())
}

fn finalizers(cm: &ConfigMap) -> Vec<String> {
    cm.metadata.finalizers.clone().unwrap_or_default()
}

/// Runs `finalizer` recording which event the closure saw; the closure returns `result`.
async fn run(
    api: &Api<ConfigMap>,
    obj: Arc<ConfigMap>,
    result: Result<u32, Failed>,
) -> (Result<u32, Error<Failed>>, Option<&'static str>) {
    let seen = Mutex::new(None);
    let out = finalizer(api, NAME, obj, |event| {
        *seen.lock() = Some(match event {
            Event::Apply(_) => "apply",
            Event::Cleanup(_) => "cleanup",
        });
        async { result }
    })
    .await;
    let seen = *seen.lock();
    (out, seen)
}

#[tokio::test]
async fn the_finalizer_is_added_before_anything_runs() {
    let (_c, client, ns) = cluster("fin-add").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let obj = create(&api, "a", &[]).await;
    let (out, seen) = run(&api, obj, Ok(7)).await;
    assert_eq!(
        out.unwrap(),
        0,
        "the default: await the change the patch makes"
    );
    assert_eq!(seen, None, "nothing runs before the finalizer is there");
    assert_eq!(finalizers(&api.get("a").await.unwrap()), [NAME]);

    // Appended after the finalizers already there.
    let obj = create(&api, "b", &["example.com/other"]).await;
    run(&api, obj, Ok(7)).await.0.unwrap();
    assert_eq!(
        finalizers(&api.get("b").await.unwrap()),
        ["example.com/other", NAME]
    );
}

#[tokio::test]
async fn apply_runs_while_the_object_lives() {
    let (_c, client, ns) = cluster("fin-apply").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let obj = create(&api, "a", &[NAME]).await;
    let (out, seen) = run(&api, obj.clone(), Ok(7)).await;
    assert_eq!((out.unwrap(), seen), (7, Some("apply")));
    let (out, _) = run(&api, obj, Err(Failed("boom"))).await;
    let err = out.unwrap_err();
    assert!(matches!(err, Error::ApplyFailed(Failed("boom"))), "{err:?}");
    assert!(err.reconcile_error().is_some() && err.api_error().is_none());
}

#[tokio::test]
async fn cleanup_runs_then_the_finalizer_goes() {
    let (_c, client, ns) = cluster("fin-cleanup").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    create(&api, "a", &["example.com/other", NAME]).await;
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let deleting = Arc::new(api.get("a").await.unwrap());
    assert!(deleting.metadata.deletion_timestamp.is_some());

    // A failed cleanup keeps the finalizer.
    let (out, seen) = run(&api, deleting.clone(), Err(Failed("not yet"))).await;
    assert!(matches!(out, Err(Error::CleanupFailed(_))));
    assert_eq!(seen, Some("cleanup"));
    assert_eq!(
        finalizers(&api.get("a").await.unwrap()),
        ["example.com/other", NAME]
    );

    let (out, seen) = run(&api, deleting, Ok(3)).await;
    assert_eq!((out.unwrap(), seen), (3, Some("cleanup")));
    assert_eq!(
        finalizers(&api.get("a").await.unwrap()),
        ["example.com/other"]
    );
}

#[tokio::test]
async fn the_last_finalizer_removed_lets_the_object_go() {
    let (_c, client, ns) = cluster("fin-gone").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    create(&api, "a", &[NAME]).await;
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let deleting = Arc::new(api.get("a").await.unwrap());
    run(&api, deleting, Ok(1)).await.0.unwrap();
    assert!(api.get("a").await.unwrap_err().is_not_found());
}

#[tokio::test]
async fn an_object_going_without_our_finalizer_is_left_alone() {
    let (_c, client, ns) = cluster("fin-ignore").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    create(&api, "a", &["example.com/other"]).await;
    api.delete("a", &DeleteParams::default()).await.unwrap();
    let deleting = Arc::new(api.get("a").await.unwrap());
    let (out, seen) = run(&api, deleting, Ok(9)).await;
    assert_eq!((out.unwrap(), seen), (0, None));
    assert_eq!(
        finalizers(&api.get("a").await.unwrap()),
        ["example.com/other"],
        "not re-added"
    );
}

#[tokio::test]
async fn a_stale_view_of_the_finalizers_fails_instead_of_clobbering() {
    let (_c, client, ns) = cluster("fin-stale").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    // Adding: someone else added a finalizer after our read.
    let stale = create(&api, "a", &[]).await;
    let mut fresh = api.get("a").await.unwrap();
    fresh.metadata.finalizers = Some(vec!["example.com/other".into()]);
    api.replace("a", &PostParams::default(), &fresh)
        .await
        .unwrap();
    let (out, _) = run(&api, stale, Ok(1)).await;
    let err = out.unwrap_err();
    assert!(matches!(err, Error::AddFinalizer(_)), "{err:?}");
    assert_eq!(
        err.api_error().and_then(|e| e.status()).map(|s| s.code),
        Some(422)
    );
    assert_eq!(
        finalizers(&api.get("a").await.unwrap()),
        ["example.com/other"]
    );

    // Removing: our finalizer moved to another index after our read (new finalizers cannot
    // be added to an object being deleted, but others may be removed).
    create(&api, "b", &["example.com/other", NAME]).await;
    api.delete("b", &DeleteParams::default()).await.unwrap();
    let stale = Arc::new(api.get("b").await.unwrap());
    let mut fresh = api.get("b").await.unwrap();
    fresh.metadata.finalizers = Some(vec![NAME.into()]);
    api.replace("b", &PostParams::default(), &fresh)
        .await
        .unwrap();
    let (out, seen) = run(&api, stale, Ok(1)).await;
    assert_eq!(seen, Some("cleanup"));
    assert!(matches!(out, Err(Error::RemoveFinalizer(_))), "{out:?}");
    assert_eq!(
        finalizers(&api.get("b").await.unwrap()),
        [NAME],
        "kept for the retry"
    );
}

#[tokio::test]
async fn bad_input_is_named() {
    let (_c, client, ns) = cluster("fin-bad").await;
    let api = Api::<ConfigMap>::namespaced(client, &ns);
    let obj = Arc::new(ConfigMap::default());
    let out: Result<u32, Error<Failed>> =
        finalizer(&api, "", obj.clone(), |_| async { Ok(1) }).await;
    assert!(matches!(out, Err(Error::InvalidFinalizer)));
    let out: Result<u32, Error<Failed>> = finalizer(&api, NAME, obj, |_| async { Ok(1) }).await;
    assert!(matches!(out, Err(Error::UnnamedObject)));
}

#[test]
fn add_and_remove_finalizer_in_memory() {
    use kcache_controller::{add_finalizer, remove_finalizer};
    let mut cm = ConfigMap::default();
    assert!(add_finalizer(&mut cm, NAME));
    assert!(!add_finalizer(&mut cm, NAME), "present already");
    assert!(add_finalizer(&mut cm, "example.com/other"));
    assert_eq!(finalizers(&cm), [NAME, "example.com/other"]);
    assert!(remove_finalizer(&mut cm, NAME));
    assert!(!remove_finalizer(&mut cm, NAME));
    assert!(remove_finalizer(&mut cm, "example.com/other"));
    assert_eq!(cm.metadata.finalizers, None, "an emptied list is left out");
}
