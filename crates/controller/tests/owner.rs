//! Owner references, mirroring controllerutil_test.go's `SetOwnerReference` and
//! `SetControllerReference` cases, on k8s-openapi and dynamic objects.

use k8s_openapi::api::apps::v1::{Deployment, ReplicaSet};
use k8s_openapi::api::core::v1::{ConfigMap, Namespace};
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use kcache_controller::{
    has_controller_reference, remove_owner_reference, set_controller_reference,
    set_controller_reference_with, set_owner_reference, OwnerError,
};
use kcache_core::{ApiResource, DynamicObject, ObjectMut};

fn meta(name: &str, ns: Option<&str>, uid: &str) -> ObjectMeta {
    ObjectMeta {
        name: Some(name.into()),
        namespace: ns.map(Into::into),
        uid: (!uid.is_empty()).then(|| uid.to_string()),
        ..ObjectMeta::default()
    }
}

fn rs(name: &str, ns: &str, uid: &str) -> ReplicaSet {
    ReplicaSet {
        metadata: meta(name, Some(ns), uid),
        ..ReplicaSet::default()
    }
}

fn deploy(name: &str, ns: &str, uid: &str) -> Deployment {
    Deployment {
        metadata: meta(name, Some(ns), uid),
        ..Deployment::default()
    }
}

fn refs(rs: &ReplicaSet) -> Vec<OwnerReference> {
    rs.metadata.owner_references.clone().unwrap_or_default()
}

#[test]
fn set_owner_reference_adds_a_plain_reference() {
    let mut obj = rs("foo", "default", "");
    set_owner_reference(&deploy("foo-parent", "default", "foo-uid"), &mut obj).unwrap();
    assert_eq!(
        refs(&obj),
        vec![OwnerReference {
            api_version: "apps/v1".into(),
            kind: "Deployment".into(),
            name: "foo-parent".into(),
            uid: "foo-uid".into(),
            controller: None,
            block_owner_deletion: None,
        }]
    );
}

#[test]
fn set_owner_reference_updates_the_same_owner_in_place() {
    let mut obj = rs("foo", "default", "");
    obj.metadata.owner_references = Some(vec![
        OwnerReference {
            api_version: "apps/v1beta1".into(),
            kind: "Deployment".into(),
            name: "foo-parent".into(),
            uid: "old-uid".into(),
            ..OwnerReference::default()
        },
        OwnerReference {
            api_version: "v1".into(),
            kind: "ConfigMap".into(),
            name: "other".into(),
            uid: "cm-uid".into(),
            ..OwnerReference::default()
        },
    ]);
    // Same group, kind and name at another version: the same owner, updated where it is.
    set_owner_reference(&deploy("foo-parent", "default", "new-uid"), &mut obj).unwrap();
    let got = refs(&obj);
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].api_version.as_str(), got[0].uid.as_str()),
        ("apps/v1", "new-uid")
    );
    assert_eq!(got[1].name, "other");
    // Another name is another owner.
    set_owner_reference(&deploy("second", "default", "2"), &mut obj).unwrap();
    assert_eq!(refs(&obj).len(), 3);
}

#[test]
fn set_controller_reference_sets_controller_and_block_owner_deletion() {
    let mut obj = rs("foo", "default", "");
    set_controller_reference(&deploy("foo", "default", "foo-uid"), &mut obj).unwrap();
    let got = refs(&obj);
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].controller, Some(true));
    assert_eq!(got[0].block_owner_deletion, Some(true));
    assert!(has_controller_reference::<Deployment>(&obj));
    assert!(!has_controller_reference::<ConfigMap>(&obj));
    // Setting it again (the same owner, e.g. at a new uid) updates it.
    set_controller_reference(&deploy("foo", "default", "uid-2"), &mut obj).unwrap();
    assert_eq!(refs(&obj).len(), 1);
    assert_eq!(refs(&obj)[0].uid, "uid-2");
}

#[test]
fn a_second_controller_is_already_owned_error() {
    let mut obj = rs("foo", "default", "");
    set_controller_reference(&deploy("foo", "default", "foo-uid"), &mut obj).unwrap();
    let err = set_controller_reference(&deploy("bar", "default", "bar-uid"), &mut obj).unwrap_err();
    assert_eq!(
        err,
        OwnerError::AlreadyOwned {
            object: "default/foo".into(),
            kind: "Deployment".into(),
            name: "foo".into(),
        }
    );
    assert_eq!(refs(&obj).len(), 1, "nothing changed");
    // A plain owner reference may still be added next to the controller.
    set_owner_reference(&deploy("bar", "default", "bar-uid"), &mut obj).unwrap();
    assert_eq!(refs(&obj).len(), 2);
}

#[test]
fn a_cluster_scoped_owner_may_own_a_namespaced_object() {
    let owner = Namespace {
        metadata: meta("ns-owner", None, "ns-uid"),
        ..Namespace::default()
    };
    let mut obj = rs("foo", "default", "");
    set_controller_reference(&owner, &mut obj).unwrap();
    assert_eq!(refs(&obj)[0].kind, "Namespace");
}

#[test]
fn a_namespaced_owner_may_not_own_a_cluster_scoped_object() {
    let mut obj = Namespace {
        metadata: meta("cluster-scoped", None, ""),
        ..Namespace::default()
    };
    let err = set_owner_reference(&deploy("foo", "default", "u"), &mut obj).unwrap_err();
    assert!(
        matches!(err, OwnerError::ClusterScopedWithNamespacedOwner { ref owner_namespace } if owner_namespace == "default")
    );
    assert!(err
        .to_string()
        .contains("cluster-scoped resource must not have a namespace-scoped owner"));
}

#[test]
fn cross_namespace_owners_are_refused() {
    let mut obj = rs("foo", "other", "");
    let err = set_controller_reference(&deploy("foo", "default", "u"), &mut obj).unwrap_err();
    assert_eq!(
        err,
        OwnerError::CrossNamespace {
            owner_namespace: "default".into(),
            object_namespace: "other".into(),
        }
    );
    assert!(obj.metadata.owner_references.is_none());
}

#[test]
fn an_owner_without_uid_is_refused() {
    let mut obj = rs("foo", "default", "");
    let err = set_owner_reference(&deploy("foo", "default", ""), &mut obj).unwrap_err();
    assert!(
        matches!(err, OwnerError::IncompleteOwner { missing: "uid", .. }),
        "{err}"
    );
}

#[test]
fn remove_owner_reference_removes_only_that_owner() {
    let mut obj = rs("foo", "default", "");
    let (a, b) = (deploy("a", "default", "1"), deploy("b", "default", "2"));
    set_owner_reference(&a, &mut obj).unwrap();
    set_owner_reference(&b, &mut obj).unwrap();
    assert!(remove_owner_reference(&a, &mut obj));
    assert!(!remove_owner_reference(&a, &mut obj));
    assert_eq!(refs(&obj).len(), 1);
    assert!(remove_owner_reference(&b, &mut obj));
    assert!(
        obj.metadata.owner_references.is_none(),
        "an empty list is left out"
    );
}

#[test]
fn works_on_dynamic_objects_with_a_runtime_kind() {
    let foo = ApiResource {
        group: "samplecontroller.k8s.io".into(),
        version: "v1alpha1".into(),
        kind: "Foo".into(),
        plural: "foos".into(),
        namespaced: true,
    };
    let mut owner = DynamicObject::new("example-foo").within("default");
    owner.metadata.uid = Some("foo-uid".into());
    let mut obj = DynamicObject::new("example-foo-cm").within("default");
    set_controller_reference_with(&owner, &foo, &mut obj).unwrap();
    let got = obj.get_owner_references();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].api_version, "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(got[0].controller, Some(true));
    assert!(kcache_core::Object::controller_owner(&obj).is_some());
}

#[cfg(feature = "k8s-openapi")]
#[test]
fn controlled_child_is_named_in_its_owners_namespace_and_controlled_by_it() {
    let owner = deploy("web", "prod", "web-uid");
    let child: ConfigMap = kcache_controller::controlled_child(&owner, "web-config").unwrap();
    let mut expected = ConfigMap {
        metadata: meta("web-config", Some("prod"), ""),
        ..ConfigMap::default()
    };
    set_controller_reference(&owner, &mut expected).unwrap();
    assert_eq!(
        child, expected,
        "name, namespace, controller reference; nothing else"
    );
    assert!(has_controller_reference::<Deployment>(&child));

    let unread = deploy("web", "prod", "");
    assert_eq!(
        kcache_controller::controlled_child::<ConfigMap, _>(&unread, "web-config"),
        Err(OwnerError::IncompleteOwner {
            kind: "Deployment".into(),
            name: "web".into(),
            missing: "uid",
        })
    );
}
