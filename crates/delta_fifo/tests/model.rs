//! Model-based property tests: random interleavings of producer calls and pops against a
//! reference model of client-go's DeltaFIFO rules, and convergence of the cache in both modes.

mod common;

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use common::{obj, Obj};
use kcache_core::{KnownObjects, ObjectKey};
use kcache_delta_fifo::{DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, FifoMode};
use parking_lot::Mutex;
use proptest::prelude::*;

/// The informer's cache: what the consumer applies deltas to, and the FIFO's known objects.
#[derive(Default)]
struct Cache(Mutex<BTreeMap<String, Arc<Obj>>>);

impl KnownObjects<Obj> for Cache {
    fn list_keys(&self) -> Vec<ObjectKey> {
        self.0
            .lock()
            .keys()
            .map(|k| ObjectKey::from(k.as_str()))
            .collect()
    }
    fn get_by_key(&self, key: &str) -> Option<Arc<Obj>> {
        self.0.lock().get(key).cloned()
    }
}

impl Cache {
    /// Applies popped deltas as an informer does.
    fn apply(&self, deltas: &Deltas<Obj>) {
        let mut c = self.0.lock();
        for d in deltas {
            let key = d.object.key().as_str().to_string();
            match (d.type_, &d.object) {
                (DeltaType::Deleted, _) => {
                    c.remove(&key);
                }
                (_, DeltaObject::Object(o)) => {
                    c.insert(key, o.clone());
                }
                (_, DeltaObject::Tombstone(_)) => unreachable!("only deletions carry tombstones"),
            }
        }
    }

    fn values(&self) -> BTreeMap<String, i64> {
        self.0
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.val))
            .collect()
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8, i64),
    Update(u8, i64),
    Delete(u8),
    Replace(BTreeMap<u8, i64>),
    Resync,
    Pop,
    /// Pop, run the next op while the popped deltas are still being processed, then apply.
    PopHeld,
    /// Pop a batch of up to this many entries, applying them in order.
    PopBatch(usize),
}

fn op() -> impl Strategy<Value = Op> {
    let k = 0u8..5;
    let v = 0i64..1000;
    prop_oneof![
        3 => (k.clone(), v.clone()).prop_map(|(k, v)| Op::Add(k, v)),
        3 => (k.clone(), v.clone()).prop_map(|(k, v)| Op::Update(k, v)),
        2 => k.clone().prop_map(Op::Delete),
        1 => prop::collection::btree_map(k, v, 0..4).prop_map(Op::Replace),
        1 => Just(Op::Resync),
        3 => Just(Op::Pop),
        2 => Just(Op::PopHeld),
        2 => (1usize..4).prop_map(Op::PopBatch),
    ]
}

fn name(k: u8) -> String {
    format!("k{k}")
}

/// One delta as the model sees it: type, value (of the object or the tombstone's), tombstone.
type MDelta = (DeltaType, Option<i64>, bool);

fn render(deltas: &Deltas<Obj>) -> (String, Vec<MDelta>) {
    let key = deltas.key().unwrap().as_str().to_string();
    let v = deltas
        .iter()
        .map(|d| {
            let val = d.object.object().map(|o| o.val);
            (d.type_, val, d.object.is_tombstone())
        })
        .collect();
    (key, v)
}

/// client-go's DeltaFIFO rules, written as plainly as possible, with the cache applied at pop.
#[derive(Default)]
struct Model {
    queue: Vec<String>,
    items: HashMap<String, Vec<MDelta>>,
    cache: BTreeMap<String, i64>,
    /// The key popped by `PopHeld` while its processing still runs, if the cache did not have it
    /// yet: the FIFO lists such a key after the cache's own keys.
    held: Option<String>,
}

impl Model {
    /// The cache's entries in the order the FIFO sees the known objects.
    fn known(&self) -> Vec<(String, i64)> {
        let held = self.held.as_ref();
        let (mut first, last): (Vec<_>, Vec<_>) = self
            .cache
            .iter()
            .map(|(k, v)| (k.clone(), *v))
            .partition(|(k, _)| Some(k) != held);
        first.extend(last);
        first
    }

    fn append(&mut self, k: &str, d: MDelta) {
        match self.items.get_mut(k) {
            Some(list) => {
                let last = list.last_mut().unwrap();
                if last.0 == DeltaType::Deleted && d.0 == DeltaType::Deleted {
                    if last.2 {
                        *last = d;
                    }
                } else {
                    list.push(d);
                }
            }
            None => {
                self.queue.push(k.to_string());
                self.items.insert(k.to_string(), vec![d]);
            }
        }
    }

    fn delete(&mut self, k: &str, v: i64) {
        if self.items.contains_key(k) || self.cache.contains_key(k) {
            self.append(k, (DeltaType::Deleted, Some(v), false));
        }
    }

    fn replace(&mut self, list: &BTreeMap<u8, i64>) {
        let listed: BTreeSet<String> = list.keys().map(|k| name(*k)).collect();
        for (k, v) in list {
            self.append(&name(*k), (DeltaType::Replaced, Some(*v), false));
        }
        for k in self.queue.clone() {
            if !listed.contains(&k) {
                let newest = self.items[&k].last().unwrap().1;
                self.append(&k, (DeltaType::Deleted, newest, true));
            }
        }
        for (k, v) in self.known() {
            if !listed.contains(&k) && !self.items.contains_key(&k) {
                self.append(&k, (DeltaType::Deleted, Some(v), true));
            }
        }
    }

    fn resync(&mut self) {
        for (k, v) in self.known() {
            if !self.items.contains_key(&k) {
                self.append(&k, (DeltaType::Sync, Some(v), false));
            }
        }
    }

    fn pop(&mut self) -> Option<(String, Vec<MDelta>)> {
        if self.queue.is_empty() {
            return None;
        }
        let k = self.queue.remove(0);
        let deltas = self.items.remove(&k).unwrap();
        for d in &deltas {
            match d.0 {
                DeltaType::Deleted => {
                    self.cache.remove(&k);
                }
                _ => {
                    self.cache.insert(k.clone(), d.1.unwrap());
                }
            }
        }
        Some((k, deltas))
    }
}

/// Runs a producer op on the FIFO (and the model, if any) and on the "server" truth.
fn produce(
    f: &DeltaFifo<Obj>,
    model: Option<&mut Model>,
    truth: &mut BTreeMap<String, i64>,
    op: &Op,
) {
    match op {
        Op::Add(k, v) | Op::Update(k, v) => {
            let o = obj(&name(*k), *v);
            if matches!(op, Op::Add(..)) {
                f.add(o).unwrap();
            } else {
                f.update(o).unwrap();
            }
            let t = if matches!(op, Op::Add(..)) {
                DeltaType::Added
            } else {
                DeltaType::Updated
            };
            if let Some(m) = model {
                m.append(&name(*k), (t, Some(*v), false));
            }
            truth.insert(name(*k), *v);
        }
        Op::Delete(k) => {
            // A deletion carries the object's last state, as a watch DELETED event does.
            let v = truth.get(&name(*k)).copied().unwrap_or(-1);
            f.delete(obj(&name(*k), v)).unwrap();
            if let Some(m) = model {
                m.delete(&name(*k), v);
            }
            truth.remove(&name(*k));
        }
        Op::Replace(list) => {
            f.replace(list.iter().map(|(k, v)| obj(&name(*k), *v)).collect(), "")
                .unwrap();
            if let Some(m) = model {
                m.replace(list);
            }
            *truth = list.iter().map(|(k, v)| (name(*k), *v)).collect();
        }
        Op::Resync => {
            f.resync().unwrap();
            if let Some(m) = model {
                m.resync();
            }
        }
        Op::Pop | Op::PopHeld | Op::PopBatch(_) => {}
    }
}

fn new_fifo(mode: FifoMode, cache: &Arc<Cache>) -> DeltaFifo<Obj> {
    DeltaFifo::new(DeltaFifoOptions {
        known_objects: Some(cache.clone() as Arc<dyn KnownObjects<Obj>>),
        emit_delta_type_replaced: true,
        mode,
        ..Default::default()
    })
}

/// Runs a pop to completion on this thread (a batch pop of a non-empty queue never waits).
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("runtime")
        .block_on(f)
}

/// Runs `ops`; with a model, checks every pop against it. Returns the truth.
fn run(
    f: &DeltaFifo<Obj>,
    cache: &Cache,
    mut model: Option<&mut Model>,
    ops: &[Op],
) -> Result<BTreeMap<String, i64>, TestCaseError> {
    let mut truth = BTreeMap::new();
    let mut i = 0;
    while i < ops.len() {
        match &ops[i] {
            Op::Pop | Op::PopHeld | Op::PopBatch(_) if f.is_empty() => {}
            Op::PopBatch(max) => {
                let batch = block_on(f.pop_batch(*max)).unwrap();
                for entry in batch.entries() {
                    cache.apply(entry.deltas());
                    if let Some(m) = model.as_deref_mut() {
                        prop_assert_eq!(Some(render(entry.deltas())), m.pop());
                    }
                }
            }
            Op::Pop => {
                let got = f.pop_blocking(|d, _| {
                    cache.apply(d);
                    render(d)
                });
                if let Some(m) = model.as_deref_mut() {
                    prop_assert_eq!(Some(got.unwrap()), m.pop());
                }
            }
            Op::PopHeld => {
                // The model pops (and applies) first: client-go's lock-held processing orders
                // the pop before the next producer call.
                let expected = model.as_deref_mut().map(|m| {
                    let cached_before: BTreeSet<String> = m.cache.keys().cloned().collect();
                    let popped = m.pop();
                    m.held = popped
                        .as_ref()
                        .map(|(k, _)| k.clone())
                        .filter(|k| !cached_before.contains(k));
                    popped
                });
                let next = ops.get(i + 1).cloned();
                i += 1;
                let got = f
                    .pop_blocking(|d, _| {
                        if let Some(next) = &next {
                            produce(f, model.as_deref_mut(), &mut truth, next);
                        }
                        cache.apply(d);
                        render(d)
                    })
                    .unwrap();
                if let Some(m) = model.as_deref_mut() {
                    m.held = None;
                }
                if let Some(expected) = expected {
                    prop_assert_eq!(Some(got), expected);
                }
            }
            op => produce(f, model.as_deref_mut(), &mut truth, op),
        }
        i += 1;
    }
    Ok(truth)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(400))]

    #[test]
    fn delta_mode_matches_the_model(ops in prop::collection::vec(op(), 0..40)) {
        let cache = Arc::new(Cache::default());
        let f = new_fifo(FifoMode::Delta, &cache);
        let mut model = Model::default();
        run(&f, &cache, Some(&mut model), &ops)?;
        let keys: Vec<String> = f.list_keys().iter().map(|k| k.to_string()).collect();
        prop_assert_eq!(keys, model.queue.clone());
        while let Some(expected) = model.pop() {
            let got = f.pop_blocking(|d, _| { cache.apply(d); render(d) }).unwrap();
            prop_assert_eq!(got, expected);
        }
        prop_assert!(f.is_empty());
        prop_assert_eq!(cache.values(), model.cache);
    }

    #[test]
    fn the_cache_converges_to_what_the_producer_implies(
        ops in prop::collection::vec(op(), 0..40),
        real in any::<bool>(),
    ) {
        let mode = if real { FifoMode::Real } else { FifoMode::Delta };
        let cache = Arc::new(Cache::default());
        let f = new_fifo(mode, &cache);
        let truth = run(&f, &cache, None, &ops)?;
        while !f.is_empty() {
            f.pop_blocking(|d, _| cache.apply(d)).unwrap();
        }
        prop_assert_eq!(cache.values(), truth);
    }
}
