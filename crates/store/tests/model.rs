//! Model-based test: random add/update/delete/replace/add_indexers sequences against a plain
//! `BTreeMap` model. After every step each index equals the index recomputed from scratch from the
//! model, and list/get agree with it. Writes the `multi` index function rejects must change nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

use kcache_core::{BoxError, DynamicObject, Object, ObjectKey};
use kcache_store::{IndexValues, Indexer, Indexers, StoreError, NAMESPACE_INDEX};
use proptest::prelude::*;

/// One object: namespace, name, the `app` label (absent = None), the `m` label (comma list).
#[derive(Debug, Clone, PartialEq)]
struct Spec {
    ns: &'static str,
    name: &'static str,
    app: Option<&'static str>,
    m: &'static str,
}

impl Spec {
    fn key(&self) -> String {
        format!("{}/{}", self.ns, self.name)
    }
    fn build(&self) -> Arc<DynamicObject> {
        let mut o = DynamicObject::new(self.name)
            .within(self.ns)
            .with_label("m", self.m);
        if let Some(app) = self.app {
            o = o.with_label("app", app);
        }
        Arc::new(o)
    }
    /// What the `multi` index function yields; `None` when it fails.
    fn multi(&self) -> Option<Vec<String>> {
        (!self.m.contains("bad")).then(|| self.m.split(',').map(String::from).collect())
    }
}

fn app_values(o: &DynamicObject) -> Result<IndexValues<'_>, BoxError> {
    Ok(o.label("app").into_iter().collect())
}

fn multi_values(o: &DynamicObject) -> Result<IndexValues<'_>, BoxError> {
    let m = o.label("m").unwrap_or("");
    if m.contains("bad") {
        return Err(format!("bad m {m:?}").into());
    }
    Ok(m.split(',').collect())
}

#[derive(Debug, Clone)]
enum Op {
    Upsert(Spec),
    Delete(Spec),
    DeleteByKey(&'static str, &'static str),
    Replace(Vec<Spec>),
    /// `upsert_all`: runs of one key (a popped FIFO entry's deltas) and of several.
    UpsertAll(Vec<Spec>),
    AddMultiIndex,
}

fn spec() -> impl Strategy<Value = Spec> {
    (
        prop::sample::select(vec!["ns1", "ns2"]),
        prop::sample::select(vec!["a", "b", "c", "d", "e"]),
        prop::option::of(prop::sample::select(vec!["web", "db", ""])),
        prop::sample::select(vec!["x", "x,y", "y,x,x", "", "z", "x,bad"]),
    )
        .prop_map(|(ns, name, app, m)| Spec { ns, name, app, m })
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        6 => spec().prop_map(Op::Upsert),
        2 => spec().prop_map(Op::Delete),
        1 => (prop::sample::select(vec!["ns1", "ns2"]), prop::sample::select(vec!["a", "b", "c"]))
            .prop_map(|(ns, name)| Op::DeleteByKey(ns, name)),
        1 => prop::collection::vec(spec(), 0..6).prop_map(Op::Replace),
        2 => prop::collection::vec(spec(), 0..6).prop_map(|mut specs| {
            // Mostly one key, as a popped FIFO entry has.
            if specs.len() > 2 {
                let (ns, name, last) = (specs[0].ns, specs[0].name, specs.len() - 1);
                for s in &mut specs[1..last] {
                    (s.ns, s.name) = (ns, name);
                }
            }
            Op::UpsertAll(specs)
        }),
        1 => Just(Op::AddMultiIndex),
    ]
}

struct Model {
    items: BTreeMap<String, Spec>,
    has_multi: bool,
}

impl Model {
    /// Value → keys, recomputed from scratch for one index.
    fn index(&self, name: &str) -> BTreeMap<String, BTreeSet<String>> {
        let mut out: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (key, s) in &self.items {
            let values: Vec<String> = match name {
                NAMESPACE_INDEX => vec![s.ns.to_string()],
                "app" => s.app.map(String::from).into_iter().collect(),
                _ => s.multi().expect("the model never stores a rejected object"),
            };
            for v in values {
                out.entry(v).or_default().insert(key.clone());
            }
        }
        out
    }
}

fn store_index(store: &Indexer<DynamicObject>, name: &str) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for value in store.list_index_func_values(name) {
        let keys: Vec<ObjectKey> = store.index_keys(name, &value).unwrap();
        assert!(
            !keys.is_empty(),
            "index {name} kept an empty set for {value:?}"
        );
        let mut sorted = keys.clone();
        sorted.sort();
        assert_eq!(keys, sorted, "index_keys is sorted");
        let by_index: BTreeSet<String> = store
            .by_index(name, &value)
            .unwrap()
            .iter()
            .map(|o| {
                let key = ObjectKey::of(&**o).to_string();
                let stored = store.get_by_key(&key).expect("indexed key is stored");
                assert!(
                    Arc::ptr_eq(o, &stored),
                    "{name}={value} holds the stored version of {key}"
                );
                key
            })
            .collect();
        let keys: BTreeSet<String> = keys.iter().map(|k| k.to_string()).collect();
        assert_eq!(
            by_index, keys,
            "by_index and index_keys agree on {name}={value}"
        );
        out.insert(value.to_string(), keys);
    }
    out
}

fn check(store: &Indexer<DynamicObject>, model: &Model) {
    let mut keys: Vec<String> = store.list_keys().iter().map(|k| k.to_string()).collect();
    keys.sort();
    assert_eq!(keys, model.items.keys().cloned().collect::<Vec<_>>());
    assert_eq!(store.list().len(), model.items.len());
    assert_eq!(store.snapshot().len(), model.items.len());
    for (key, s) in &model.items {
        let got = store.get_by_key(key).expect("stored");
        assert_eq!(got.label("app"), s.app);
        assert_eq!(got.label("m"), Some(s.m));
    }
    let mut names = vec![NAMESPACE_INDEX, "app"];
    if model.has_multi {
        names.push("multi");
    }
    for name in names {
        assert_eq!(store_index(store, name), model.index(name), "index {name}");
    }
    if !model.has_multi {
        assert_eq!(
            store.by_index("multi", "x"),
            Err(StoreError::IndexNotFound("multi".into()))
        );
    }
}

fn run(ops: Vec<Op>) {
    let store = Indexer::new(
        Indexers::new()
            .with_namespace_index()
            // Kept on updates that leave the label: the model checks the kept values too.
            .with_reuse("app", app_values, |old, new| {
                old.label("app") == new.label("app")
            }),
    );
    let mut model = Model {
        items: BTreeMap::new(),
        has_multi: false,
    };
    for op in ops {
        match op {
            Op::Upsert(s) => {
                let res = store.update(s.build());
                if model.has_multi && s.multi().is_none() {
                    assert!(
                        matches!(res, Err(StoreError::IndexFunc { ref key, .. }) if *key == s.key())
                    );
                } else {
                    res.unwrap();
                    model.items.insert(s.key(), s);
                }
            }
            Op::Delete(s) => {
                store.delete(&s.build()).unwrap();
                model.items.remove(&s.key());
            }
            Op::DeleteByKey(ns, name) => {
                let key = format!("{ns}/{name}");
                let removed = store.delete_by_key(&key);
                assert_eq!(removed.is_some(), model.items.remove(&key).is_some());
            }
            Op::Replace(specs) => {
                let res = store.replace(specs.iter().map(Spec::build).collect(), "7");
                if model.has_multi && specs.iter().any(|s| s.multi().is_none()) {
                    assert!(res.is_err());
                } else {
                    res.unwrap();
                    model.items = specs.into_iter().map(|s| (s.key(), s)).collect();
                }
            }
            Op::UpsertAll(specs) => {
                let objs: Vec<_> = specs.iter().map(Spec::build).collect();
                let res = store.upsert_all(&objs);
                if model.has_multi && specs.iter().any(|s| s.multi().is_none()) {
                    assert!(matches!(res, Err(StoreError::IndexFunc { .. })));
                } else {
                    let replaced = res.unwrap();
                    assert_eq!(replaced.len(), specs.len());
                    for (s, old) in specs.into_iter().zip(replaced) {
                        let expected = model.items.insert(s.key(), s);
                        assert_eq!(
                            old.map(|o| o.label("m").map(str::to_string)),
                            expected.map(|e| Some(e.m.to_string()))
                        );
                    }
                }
            }
            Op::AddMultiIndex => {
                let res = store.add_indexers(Indexers::new().with("multi", multi_values));
                if model.has_multi {
                    assert_eq!(res, Err(StoreError::IndexerConflict(vec!["multi".into()])));
                } else if model.items.values().any(|s| s.multi().is_none()) {
                    assert!(matches!(res, Err(StoreError::IndexFunc { .. })));
                } else {
                    res.unwrap();
                    model.has_multi = true;
                }
            }
        }
        check(&store, &model);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]
    #[test]
    fn store_and_indexes_match_the_model(ops in prop::collection::vec(op(), 1..40)) {
        run(ops);
    }
}
