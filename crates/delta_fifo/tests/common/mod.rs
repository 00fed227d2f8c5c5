//! Test objects and helpers shared by the integration tests (client-go's `testFifoObject`).
#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use kcache_core::{KnownObjects, Object, ObjectKey};
use kcache_delta_fifo::{DeltaFifo, DeltaFifoOptions, DeltaObject, Deltas, FifoMode};
use parking_lot::Mutex;

/// A named value; `xfrm` counts how often the transformer saw it.
#[derive(Debug, Clone, PartialEq)]
pub struct Obj {
    pub name: String,
    pub val: i64,
    pub xfrm: u32,
}

impl Object for Obj {
    fn name(&self) -> &str {
        &self.name
    }
    fn namespace(&self) -> Option<&str> {
        None
    }
    fn resource_version(&self) -> Option<&str> {
        None
    }
    fn uid(&self) -> Option<&str> {
        None
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        None
    }
}

pub fn obj(name: &str, val: i64) -> Arc<Obj> {
    Arc::new(Obj {
        name: name.into(),
        val,
        xfrm: 0,
    })
}

/// A settable known-objects cache (client-go's `literalListerGetter`), in insertion order.
#[derive(Default)]
pub struct Known(pub Mutex<Vec<Arc<Obj>>>);

impl Known {
    pub fn of(objs: &[(&str, i64)]) -> Arc<Known> {
        Arc::new(Known(Mutex::new(
            objs.iter().map(|(n, v)| obj(n, *v)).collect(),
        )))
    }
}

impl KnownObjects<Obj> for Known {
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.0.lock().iter().map(|o| ObjectKey::of(&**o)).collect()
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<Obj>> {
        self.0.lock().iter().find(|o| o.name == key).cloned()
    }
}

pub fn fifo(mode: FifoMode, known: Option<Arc<Known>>, emit_replaced: bool) -> DeltaFifo<Obj> {
    DeltaFifo::new(DeltaFifoOptions {
        known_objects: known.map(|k| k as Arc<dyn KnownObjects<Obj>>),
        emit_delta_type_replaced: emit_replaced,
        mode,
        ..Default::default()
    })
}

/// "Type name=val", with `~` marking a tombstone and `none` a tombstone without object.
pub fn show(deltas: &Deltas<Obj>) -> Vec<String> {
    deltas
        .iter()
        .map(|d| match &d.object {
            DeltaObject::Object(o) => format!("{} {}={}", d.type_, o.name, o.val),
            DeltaObject::Tombstone(t) => match &t.obj {
                Some(o) => format!("{} ~{}={}", d.type_, t.key, o.val),
                None => format!("{} ~{}=none", d.type_, t.key),
            },
        })
        .collect()
}

/// Pops one entry (the queue must not be empty): its deltas shown, and `is_in_initial_list`.
pub fn pop(f: &DeltaFifo<Obj>) -> (Vec<String>, bool) {
    f.pop_blocking(|d, initial| (show(d), initial)).unwrap()
}

/// Pops until empty, concatenating what was popped.
pub fn drain(f: &DeltaFifo<Obj>) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    while !f.is_empty() {
        out.push(pop(f).0);
    }
    out
}
