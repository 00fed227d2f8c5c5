//! The server's warnings reach the client's `WarningHandler`: a list of a deprecated version
//! (`extensions/v1beta1` Ingresses) hands over kube-apiserver 1.20.2's deprecation text, a
//! failed get of it too, a list of a current version nothing. Against kcache-testserver, or the
//! real server named by KCACHE_TEST_KUBECONFIG.

use crate::support;

use std::sync::{Arc, Mutex};

use kcache_core::{DynamicObject, ListParams};
use kcache_testing::TestCluster;
use kcache_transport::{Api, WarningHandler};
use support::client;

const INGRESS: &str = "extensions/v1beta1 Ingress is deprecated in v1.14+, unavailable in v1.22+; use networking.k8s.io/v1 Ingress";

#[tokio::test]
async fn deprecation_warnings_reach_the_handler() {
    let cluster = TestCluster::start().await.unwrap();
    let seen = Arc::new(Mutex::new(Vec::<(u16, String, String)>::new()));
    let s = seen.clone();
    let handler: Arc<dyn WarningHandler> = Arc::new(move |code: u16, agent: &str, text: &str| {
        s.lock()
            .unwrap()
            .push((code, agent.to_string(), text.to_string()));
    });
    let client = client(&cluster, |c| c.warning_handler = Some(handler));
    let resource = |group: &str, version: &str| kcache_core::ApiResource {
        group: group.into(),
        version: version.into(),
        kind: "Ingress".into(),
        plural: "ingresses".into(),
        namespaced: true,
    };
    let old =
        Api::<DynamicObject>::dynamic(client.clone(), resource("extensions", "v1beta1"), None);
    old.list(&ListParams::default()).await.unwrap();
    let one = resource("extensions", "v1beta1");
    let ns = Api::<DynamicObject>::dynamic(client.clone(), one, Some("default"));
    assert!(ns.get("not-there").await.unwrap_err().is_not_found());
    let current = Api::<DynamicObject>::dynamic(client, resource("networking.k8s.io", "v1"), None);
    current.list(&ListParams::default()).await.unwrap();
    let want = (299, "-".to_string(), INGRESS.to_string());
    assert_eq!(*seen.lock().unwrap(), [want.clone(), want]);
}
