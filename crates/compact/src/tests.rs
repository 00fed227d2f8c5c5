//! Tests of the compact object representation.

use std::sync::Arc;

use serde_json::json;

use super::value::interned_entries;
use super::{CompactObject, CompactValue};
use kcache_core::{Object, ObjectKey};

fn pod(name: &str, node: &str) -> serde_json::Value {
    json!({
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": name, "namespace": "ns-1", "uid": format!("uid-{name}"),
            "resourceVersion": "7", "labels": {"app": "web", "tier": "backend"},
            "annotations": {"note": "x"},
            "managedFields": [{"manager": "kubelet", "fieldsV1": {"f:status": {"f:phase": {}}}}]},
        "spec": {"nodeName": node, "priority": 0,
            "containers": [{"name": "main", "image": "web:v1", "ports": [{"containerPort": 8080}]}]},
        "status": {"phase": "Running", "ratio": 0.5, "big": u64::MAX, "neg": i64::MIN}
    })
}

fn compact(v: &serde_json::Value) -> CompactObject {
    serde_json::from_value(v.clone()).unwrap()
}

fn ptr(v: &CompactValue) -> *const u8 {
    match v {
        CompactValue::String(s) => Arc::as_ptr(s) as *const u8,
        CompactValue::Array(a) => Arc::as_ptr(a) as *const u8,
        CompactValue::Object(o) => Arc::as_ptr(o) as *const u8,
        other => panic!("{other:?} is not shared"),
    }
}

#[test]
fn round_trips_through_json_text_and_values() {
    let json = pod("a", "node-1");
    let text = serde_json::to_string(&json).unwrap();
    let obj: CompactObject = serde_json::from_str(&text).unwrap();
    assert_eq!(obj.to_json(), json);
    assert_eq!(serde_json::to_string(&obj).unwrap(), text);
    assert_eq!(CompactObject::from_json(&json).unwrap(), obj);
    assert_eq!(
        obj.get(&["status", "big"]).unwrap().as_f64(),
        Some(u64::MAX as f64)
    );
    assert_eq!(
        obj.get(&["status", "neg"]).unwrap().as_i64(),
        Some(i64::MIN)
    );
}

#[test]
fn keys_are_sorted_and_a_repeated_key_keeps_its_last_value() {
    let v: CompactValue = serde_json::from_str(r#"{"b":1,"a":2,"b":3}"#).unwrap();
    assert_eq!(serde_json::to_string(&v).unwrap(), r#"{"a":2,"b":3}"#);
    let w: CompactValue = serde_json::from_str(r#"{"a":2,"b":3}"#).unwrap();
    assert_eq!(ptr(&v), ptr(&w));
}

#[test]
fn objects_that_differ_only_by_name_share_everything_else() {
    let a = compact(&pod("a", "node-1"));
    let b = compact(&pod("b", "node-1"));
    let c = compact(&pod("c", "node-2"));
    let at = |o: &CompactObject, p: &[&str]| ptr(o.get(p).unwrap());
    assert_eq!(at(&a, &["spec"]), at(&b, &["spec"]));
    assert_eq!(at(&a, &["status"]), at(&b, &["status"]));
    assert_eq!(
        at(&a, &["metadata", "managedFields"]),
        at(&b, &["metadata", "managedFields"])
    );
    assert_ne!(at(&a, &["metadata"]), at(&b, &["metadata"]));
    // A different node name: a new spec, but its containers are still shared.
    assert_ne!(at(&a, &["spec"]), at(&c, &["spec"]));
    assert_eq!(
        at(&a, &["spec", "containers"]),
        at(&c, &["spec", "containers"])
    );
    // Identical label maps are one BTreeMap.
    assert!(std::ptr::eq(a.labels().unwrap(), b.labels().unwrap()));
}

#[test]
fn implements_object() {
    let a = compact(&pod("a", "node-1"));
    assert_eq!(a.name(), "a");
    assert_eq!(a.namespace(), Some("ns-1"));
    assert_eq!(a.resource_version(), Some("7"));
    assert_eq!(a.uid(), Some("uid-a"));
    assert_eq!(a.label("app"), Some("web"));
    assert_eq!(a.annotations().unwrap()["note"], "x");
    assert_eq!(ObjectKey::of(&a).as_str(), "ns-1/a");
    let bare: CompactObject = serde_json::from_str(r#"{"kind":"Namespace"}"#).unwrap();
    assert_eq!(
        (bare.name(), bare.namespace(), bare.labels()),
        ("", None, None)
    );
}

/// A cache keeps one `CompactObject` per object: the tree's root and the two typed maps' cells,
/// not copies of pointers to strings the tree holds (name, namespace, resourceVersion, uid).
#[test]
fn an_object_is_its_tree_and_its_two_maps() {
    type Cell = std::sync::OnceLock<Option<Arc<u8>>>;
    assert_eq!(
        std::mem::size_of::<CompactObject>(),
        std::mem::size_of::<CompactValue>() + 2 * std::mem::size_of::<Cell>()
    );
}

/// The label and annotation maps are made when first read, each on its own, and a clone made
/// after that shares them.
#[test]
fn maps_are_made_on_first_read() {
    let a = compact(&pod("lazy", "node-1"));
    assert_eq!(a.maps_made(), (false, false));
    assert_eq!(a.label("tier"), Some("backend"));
    assert_eq!(a.maps_made(), (true, false));
    let b = a.clone();
    assert!(std::ptr::eq(a.labels().unwrap(), b.labels().unwrap()));
    assert_eq!(b.annotations().unwrap()["note"], "x");
    assert_eq!(
        (a.maps_made(), b.maps_made()),
        ((true, false), (true, true))
    );
}

#[test]
fn path_access_reaches_object_members_and_array_items() {
    let a = compact(&pod("a", "node-1"));
    let s = |p: &[&str]| a.get(p).and_then(CompactValue::as_str);
    assert_eq!(s(&["spec", "nodeName"]), Some("node-1"));
    assert_eq!(s(&["spec", "containers", "0", "image"]), Some("web:v1"));
    assert_eq!(s(&["spec", "containers", "1", "image"]), None);
    assert_eq!(s(&["spec", "missing"]), None);
    assert_eq!(a.get(&["spec", "priority"]).unwrap().as_i64(), Some(0));
    assert_eq!(a.get(&["status", "ratio"]).unwrap().as_f64(), Some(0.5));
    assert!(a.get(&["spec", "nodeName", "deeper"]).is_none());
}

#[test]
fn with_resource_version_changes_only_the_version() {
    let a = compact(&pod("a", "node-1"));
    let b = a.with_resource_version("2000001");
    assert_eq!(b.resource_version(), Some("2000001"));
    assert_eq!(
        b.get(&["metadata", "resourceVersion"]).unwrap().as_str(),
        Some("2000001")
    );
    assert_eq!(a.resource_version(), Some("7"));
    assert_eq!(
        ptr(a.get(&["spec"]).unwrap()),
        ptr(b.get(&["spec"]).unwrap())
    );
    let mut expected = pod("a", "node-1");
    expected["metadata"]["resourceVersion"] = json!("2000001");
    assert_eq!(b.to_json(), expected);
    let bare: CompactObject = serde_json::from_str("{}").unwrap();
    assert_eq!(
        bare.with_resource_version("3").to_json(),
        json!({"metadata": {"resourceVersion": "3"}})
    );
}

#[test]
fn decodes_into_typed_objects_on_demand() {
    use k8s_openapi::api::core::v1::Pod;
    let a = compact(&pod("a", "node-1"));
    let typed: Pod = a.to_typed().unwrap();
    assert_eq!(typed.spec.unwrap().node_name.as_deref(), Some("node-1"));
    assert_eq!(typed.metadata.name.as_deref(), Some("a"));
}

#[test]
fn malformed_objects_are_rejected_with_the_field_named() {
    let err = |text: &str| {
        serde_json::from_str::<CompactObject>(text)
            .unwrap_err()
            .to_string()
    };
    assert!(err("[1]").contains("not a JSON object"));
    assert!(err(r#"{"metadata":3}"#).contains("metadata is not an object"));
    assert!(err(r#"{"metadata":{"name":1}}"#).contains("metadata.name is not a string"));
    assert!(err(r#"{"metadata":{"namespace":[]}}"#).contains("metadata.namespace is not"));
    assert!(err(r#"{"metadata":{"resourceVersion":7}}"#).contains("resourceVersion is not"));
    assert!(err(r#"{"metadata":{"uid":{}}}"#).contains("metadata.uid is not a string"));
    assert!(err(r#"{"metadata":{"labels":{"a":1}}}"#).contains("metadata.labels.a"));
    assert!(err(r#"{"metadata":{"annotations":[]}}"#).contains("metadata.annotations"));
    assert!(err(r#"{"metadata":{"name":"x"}"#).contains("EOF"));
}

/// A relist decodes every cached object again, on whichever thread: an unchanged object must
/// come out as the very tree the cache holds, or the relist holds a second copy of the cache
/// (interning tables per core instead of one made kcache-bench's 100k-pod relist peak 1.44× the
/// synced RSS instead of 1.11×).
#[test]
fn concurrent_decoders_share_one_tree() {
    let text = serde_json::to_string(&pod("shared", "node-9")).unwrap();
    let objs: Vec<CompactObject> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4)
            .map(|_| s.spawn(|| serde_json::from_str::<CompactObject>(&text).unwrap()))
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // The roots are each version's own (see `a_versions_own_nodes_are_not_interned_...`);
    // everything under them that can be shared is one tree.
    for o in &objs[1..] {
        for path in [
            &["spec"][..],
            &["metadata", "labels"],
            &["metadata", "name"],
        ] {
            assert_eq!(ptr(o.get(path).unwrap()), ptr(objs[0].get(path).unwrap()));
        }
    }
}

/// The tests that count the process-wide tables' entries, one at a time.
static COUNTING_ENTRIES: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn dropped_objects_do_not_grow_the_interner_without_bound() {
    let _alone = COUNTING_ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
    // 40 000 distinct objects, 2 000 alive at a time. Other tests in this binary intern a few
    // hundred values concurrently; without pruning this would leave > 120 000 entries.
    for round in 0..20 {
        let live: Vec<CompactObject> = (0..2000)
            .map(|i| compact(&pod(&format!("r{round}-{i}"), "node-1")))
            .collect();
        assert_eq!(live.len(), 2000);
    }
    let (strings, arrays, objects) = interned_entries();
    assert!(
        strings + arrays + objects < 60_000,
        "{strings} {arrays} {objects}"
    );
}

/// Each interning entry is a `Weak`, which keeps a dropped value's allocation: dropping a cache
/// while nothing else interns must still empty the tables of its values.
#[test]
fn dropping_objects_releases_their_interned_values() {
    let _alone = COUNTING_ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
    let live: Vec<CompactObject> = (0..20_000)
        .map(|i| compact(&pod(&format!("dropped-{i}"), "node-1")))
        .collect();
    // Each pod's name is interned; its uid, resourceVersion, metadata and root are not.
    let (strings, _, objects) = interned_entries();
    assert!(strings + objects > 20_000, "{strings} {objects}");
    drop(live);
    // Other tests in this binary intern a few hundred values meanwhile.
    let (strings, _, objects) = interned_entries();
    assert!(strings + objects < 20_000, "{strings} {objects}");
}

/// Updates of a large cache (each drops an old version) do not prune every table every few
/// dozen updates: a prune, O(entries), is due only after an eighth as many deaths as the tables
/// hold entries, though an object's root and metadata are not among them.
#[test]
fn replacing_a_few_objects_of_a_large_cache_prunes_nothing() {
    use std::sync::atomic::Ordering;
    let _alone = COUNTING_ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
    let mut live: Vec<CompactObject> = (0..8000)
        .map(|i| compact(&pod(&format!("kept-{i}"), "node-1")))
        .collect();
    // A prune now counts the 8000 objects' entries.
    drop(
        (0..64)
            .map(|i| compact(&pod(&format!("gone-{i}"), "node-1")))
            .collect::<Vec<_>>(),
    );
    let before = super::object::PRUNES.load(Ordering::Relaxed);
    for (i, obj) in live.iter_mut().take(500).enumerate() {
        *obj = compact(&pod(&format!("kept-{i}"), "node-2"));
    }
    assert_eq!(super::object::PRUNES.load(Ordering::Relaxed), before);
}

/// Before any prune there is no count of entries to go by: the first prune must still wait for
/// an eighth of a large cache to die, not come after 64 deaths (a walk of every table, 1.2 ms
/// for 10k ConfigMaps, in the way of a watch event).
#[test]
fn the_first_prune_of_a_large_cache_waits_for_an_eighth_of_it() {
    use std::sync::atomic::Ordering;
    let _alone = COUNTING_ENTRIES.lock().unwrap_or_else(|e| e.into_inner());
    let mut live: Vec<CompactObject> = (0..8000)
        .map(|i| compact(&pod(&format!("first-{i}"), "node-1")))
        .collect();
    super::object::forget_prunes();
    let before = super::object::PRUNES.load(Ordering::Relaxed);
    for (i, obj) in live.iter_mut().take(500).enumerate() {
        *obj = compact(&pod(&format!("first-{i}"), "node-2"));
    }
    assert_eq!(super::object::PRUNES.load(Ordering::Relaxed), before);
    // An eighth of the entries later, it comes.
    drop(live);
    assert!(super::object::PRUNES.load(Ordering::Relaxed) > before);
}

#[test]
fn same_at_agrees_with_comparing_what_each_path_points_to() {
    let parse = |s: &str| -> CompactValue { serde_json::from_str(s).unwrap() };
    let values = [
        parse(r#"{"spec":{"nodeName":"n1","x":[1,{"y":2}]},"rv":"1"}"#),
        parse(r#"{"spec":{"nodeName":"n1","x":[1,{"y":2}]},"rv":"2"}"#),
        parse(r#"{"spec":{"nodeName":"n2","x":[1,{"y":3}]},"rv":"2"}"#),
        parse(r#"{"spec":{"x":[1]},"rv":"3"}"#),
        parse(r#"{"spec":"flat"}"#),
        parse(r#"[{"spec":1}]"#),
        parse("null"),
    ];
    let paths: [&[&str]; 6] = [
        &[],
        &["spec"],
        &["spec", "nodeName"],
        &["spec", "x", "1", "y"],
        &["rv", "deeper"],
        &["0", "spec"],
    ];
    for a in &values {
        for b in &values {
            for path in paths {
                assert_eq!(
                    a.same_at(b, path),
                    a.pointer(path) == b.pointer(path),
                    "{a:?} {b:?} at {path:?}"
                );
            }
        }
    }
}

/// The per-thread front caches remember a subtree once the shared table already held it, and
/// never an object's own root (which would keep a whole dropped object alive).
#[test]
fn front_caches_keep_shared_subtrees_only() {
    let object = |root: &str| {
        CompactValue::from(&json!({"root": root, "shared": {"front-test": ["a", "b"]}}))
    };
    let holders = |v: &CompactValue| match v {
        CompactValue::Object(o) => Arc::strong_count(o),
        _ => unreachable!(),
    };
    let shared = |v: &CompactValue| v.get("shared").unwrap().clone();
    let a = object("front-test-1");
    assert_eq!(holders(&a), 1, "a new root is not remembered");
    // Met once: held by `a` and the clone `shared` makes.
    assert_eq!(holders(&shared(&a)), 2);
    let b = object("front-test-2");
    assert_eq!(holders(&b), 1);
    assert!(shared(&a).same(&shared(&b)));
    // Met twice: held by `a`, `b`, this thread's front and the clone.
    assert_eq!(holders(&shared(&a)), 4);
}

/// `-0.0` and `0.0` are equal numbers to `serde_json::Number` but different JSON: one must never
/// be handed out for the other, whichever is alive (held by a cache, or by a front cache).
#[test]
fn negative_zero_is_not_interned_as_zero() {
    let parse = |s: &str| -> CompactValue { serde_json::from_str(s).unwrap() };
    let negative = [parse("[-0.0]"), parse("[-0.0]"), parse(r#"{"z":-0.0}"#)];
    assert_eq!(serde_json::to_string(&parse("[0.0]")).unwrap(), "[0.0]");
    assert_eq!(
        serde_json::to_string(&parse(r#"{"z":0.0}"#)).unwrap(),
        r#"{"z":0.0}"#
    );
    assert_eq!(serde_json::to_string(&negative[0]).unwrap(), "[-0.0]");
    assert_ne!(parse("[0.0]"), negative[0]);
    assert_eq!(parse("[1.5]"), parse("[1.5]"));
}

/// Containers are decoded on per-thread stacks: one that fails half-way (at any depth) leaves
/// nothing behind for the next value, and nested containers get exactly their own elements.
#[test]
fn a_value_that_fails_half_way_leaves_nothing_for_the_next() {
    for broken in [
        r#"{"a":[1,2,{"b":"#,
        r#"[{"a":1},[true,{"x":[1,2,3]}],"#,
        r#"{"a":{"b":{"c":[1,2,3] "d":1}}}"#,
        r#"[1,2,3,{"k":-}]"#,
    ] {
        assert!(
            serde_json::from_str::<CompactValue>(broken).is_err(),
            "{broken}"
        );
        assert_eq!(crate::serde_impls::open_elements(), 0, "after {broken}");
        let text = r#"{"z":[{"y":[1,[2,3],{}]},[]],"a":{"b":[{"c":null}]}}"#;
        let v: CompactValue = serde_json::from_str(text).unwrap();
        assert_eq!(
            serde_json::to_string(&v).unwrap(),
            r#"{"a":{"b":[{"c":null}]},"z":[{"y":[1,[2,3],{}]},[]]}"#,
            "after {broken}"
        );
        assert_eq!(crate::serde_impls::open_elements(), 0);
    }
}

#[test]
fn get_finds_every_member_and_nothing_else_in_small_and_large_objects() {
    // Objects up to 16 members are scanned, larger ones searched: both must agree with the
    // members themselves, for keys present, absent, of one length and of another.
    for n in [0usize, 1, 7, 16, 17, 40] {
        let members: Vec<(String, CompactValue)> = (0..n)
            .map(|i| (format!("k{}", i * 3), CompactValue::Number(i.into())))
            .collect();
        let object = CompactValue::object(members.iter().cloned());
        for (key, value) in &members {
            assert_eq!(object.get(key), Some(value), "{key} of {n}");
        }
        for absent in ["k1", "k2", "k11", "k999", "", "kk", "k0 "] {
            assert_eq!(object.get(absent), None, "{absent} of {n}");
        }
    }
    assert_eq!(CompactValue::string("x").get("x"), None);
}

/// An object version's resourceVersion and uid, its metadata and its root are unique to it:
/// decoded, they stay out of the interning tables (two decodes of one version are equal, not one `Arc`),
/// while everything under them that other objects can share still is; a tree without a
/// resourceVersion is interned whole.
#[test]
fn a_versions_own_nodes_are_not_interned_and_the_rest_is() {
    let text = serde_json::to_string(&pod("unique-test", "node-1")).unwrap();
    let a: CompactValue = serde_json::from_str(&text).unwrap();
    let b: CompactValue = serde_json::from_str(&text).unwrap();
    assert_eq!(a, b);
    let at = |v: &CompactValue, path: &[&str]| ptr(v.pointer(path).unwrap());
    for path in [
        &[][..],
        &["metadata"],
        &["metadata", "resourceVersion"],
        &["metadata", "uid"],
    ] {
        assert_ne!(at(&a, path), at(&b, path), "{path:?} is unique");
    }
    // An owner reference's uid (the owner's, shared by its children) is interned, and so is a
    // uid anywhere but in the root's own metadata.
    let owned = r#"{"metadata": {"uid": "u1", "ownerReferences": [{"uid": "u0"}]},
                    "spec": {"metadata": {"uid": "u2"}}, "status": {"uid": "u3"}}"#;
    let (c, d): (CompactValue, CompactValue) = (
        serde_json::from_str(owned).unwrap(),
        serde_json::from_str(owned).unwrap(),
    );
    assert_ne!(at(&c, &["metadata", "uid"]), at(&d, &["metadata", "uid"]));
    for path in [&["metadata", "ownerReferences"][..], &["spec"], &["status"]] {
        assert_eq!(at(&c, path), at(&d, path), "{path:?} is shared");
    }
    for path in [
        &["spec"][..],
        &["metadata", "labels"],
        &["metadata", "managedFields"],
        &["metadata", "name"],
    ] {
        assert_eq!(at(&a, path), at(&b, path), "{path:?} is shared");
    }
    // A unique value deep in an array makes the array and its item unique too.
    let listed = r#"{"items": [{"metadata": {"resourceVersion": "1"}}], "other": ["x"]}"#;
    let (c, d): (CompactValue, CompactValue) = (
        serde_json::from_str(listed).unwrap(),
        serde_json::from_str(listed).unwrap(),
    );
    assert_ne!(at(&c, &["items"]), at(&d, &["items"]));
    assert_eq!(at(&c, &["other"]), at(&d, &["other"]));
    let plain = r#"{"spec": {"replicas": 3}, "resourceVersion": 4}"#;
    let (e, f): (CompactValue, CompactValue) = (
        serde_json::from_str(plain).unwrap(),
        serde_json::from_str(plain).unwrap(),
    );
    assert_eq!(ptr(&e), ptr(&f), "a number is no version's own string");
}
