//! A controller on the runtime under the Manager, using the helpers: ConfigMap → Secret with a
//! finalizer, `create_or_update` and a controller reference, elected on a Lease of the API
//! server. Every wait is a liveness guard on a condition.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::{ConfigMap, Secret};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_openapi::ByteString;
use kcache_controller::finalizer::{self, finalizer, Event};
use kcache_controller::{
    create_or_update, set_controller_reference, Action, Controller, DefaultErrorPolicy, Manager,
    OwnerError,
};
use kcache_core::Object;
use kcache_informer::FactoryOptions;
use kcache_leaderelection::LeaderElectionConfig;
use kcache_transport::{Api, DeleteParams, PostParams};
use tokio_util::sync::CancellationToken;

use crate::helpers::cluster;

const FINALIZER: &str = "example.com/secret-cleanup";
const LIMIT: Duration = Duration::from_secs(30);

struct Ctx {
    cms: Api<ConfigMap>,
    secrets: Api<Secret>,
    cleanups: AtomicUsize,
}

type Error = finalizer::Error<kcache_controller::create_or_update::Error<OwnerError>>;

/// The whole controller: a Secret holding each ConfigMap's data, owned by it; a cleanup step
/// before the ConfigMap goes.
async fn reconcile(cm: Arc<ConfigMap>, ctx: Arc<Ctx>) -> Result<Action, Error> {
    finalizer(&ctx.cms, FINALIZER, cm, |event| async {
        match event {
            Event::Apply(cm) => {
                let mut secret = Secret::default();
                secret.metadata.name = cm.metadata.name.clone();
                secret.metadata.namespace = cm.metadata.namespace.clone();
                let data: BTreeMap<_, _> = cm
                    .data
                    .iter()
                    .flatten()
                    .map(|(k, v)| (k.clone(), ByteString(v.clone().into_bytes())))
                    .collect();
                create_or_update(&ctx.secrets, secret, |s| {
                    s.data = Some(data);
                    set_controller_reference(&*cm, s)
                })
                .await?;
                Ok(Action::await_change())
            }
            Event::Cleanup(_) => {
                ctx.cleanups.fetch_add(1, Ordering::SeqCst);
                Ok(Action::await_change())
            }
        }
    })
    .await
}

async fn eventually<F: std::future::Future<Output = bool>>(
    what: &str,
    mut check: impl FnMut() -> F,
) {
    let deadline = tokio::time::Instant::now() + LIMIT;
    while !check().await {
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test]
async fn a_controller_with_a_finalizer_and_owned_secrets_runs_under_the_manager() {
    let (_c, client, ns) = cluster("mgr-ctl").await;
    let mut election = LeaderElectionConfig::new("only");
    election.lease_duration = Duration::from_secs(3);
    election.renew_deadline = Duration::from_secs(2);
    election.retry_period = Duration::from_millis(300);
    let mut manager = Manager::builder(client.clone())
        .leader_election(&ns, "cm-to-secret", election)
        .factory_options(FactoryOptions {
            namespace: Some(ns.clone()),
            ..FactoryOptions::default()
        })
        .graceful_shutdown_timeout(Duration::from_secs(10))
        .build()
        .unwrap();
    let ctx = Arc::new(Ctx {
        cms: Api::namespaced(client.clone(), &ns),
        secrets: Api::namespaced(client.clone(), &ns),
        cleanups: AtomicUsize::new(0),
    });
    let controller = Controller::for_::<ConfigMap>(manager.factory())
        .owns::<Secret>()
        .named("cm-to-secret")
        .into_runnable(reconcile, DefaultErrorPolicy, ctx.clone());
    manager.add(controller).unwrap();
    let elected = manager.elected();
    let shutdown = CancellationToken::new();
    let run = tokio::spawn(manager.run_until(shutdown.clone()));

    let mut cm = ConfigMap {
        metadata: ObjectMeta {
            name: Some("app".into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("k".into(), "v".into())])),
        ..ConfigMap::default()
    };
    cm = ctx.cms.create(&PostParams::default(), &cm).await.unwrap();
    let uid = cm.metadata.uid.clone().unwrap();
    eventually("the owned Secret", || async {
        ctx.secrets.get("app").await.is_ok_and(|s| {
            s.controller_owner()
                .is_some_and(|o| o.uid == uid && o.kind == "ConfigMap")
                && s.data.as_ref().and_then(|d| d.get("k")) == Some(&ByteString(b"v".to_vec()))
        })
    })
    .await;
    assert!(*elected.borrow(), "the controller ran as the leader");
    assert!(ctx.cms.get("app").await.unwrap().has_finalizer(FINALIZER));

    // owns: deleting the Secret reconciles its owner, which makes it again.
    ctx.secrets
        .delete("app", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the Secret made again", || async {
        ctx.secrets
            .get("app")
            .await
            .is_ok_and(|s| s.metadata.uid.is_some())
    })
    .await;

    // The ConfigMap's deletion waits for the cleanup, then the finalizer goes and so does it.
    ctx.cms
        .delete("app", &DeleteParams::default())
        .await
        .unwrap();
    eventually("the ConfigMap gone", || async {
        ctx.cms.get("app").await.is_err_and(|e| e.is_not_found())
    })
    .await;
    assert_eq!(ctx.cleanups.load(Ordering::SeqCst), 1);

    shutdown.cancel();
    tokio::time::timeout(LIMIT, run)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}
