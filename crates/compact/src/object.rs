//! `CompactObject`: a Kubernetes object as a shared `CompactValue` tree plus its label and
//! annotation maps, typed as the machinery reads them.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock, OnceLock};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::interner::{Interner, HASHER};
use super::value::{prune_tables, table_entries, CompactMap, CompactValue};
use kcache_core::{Error, Object, OwnerRef};

/// Label and annotation maps, one per distinct interned map node.
static STRING_MAPS: LazyLock<Interner<StringMap>> =
    LazyLock::new(|| Interner::new(|m| hash_source(&m.source)));

/// A label map's hash: its source node's address.
fn hash_source(source: &Arc<CompactMap>) -> u64 {
    HASHER.hash_one(Arc::as_ptr(source) as *const u8 as usize)
}

/// `metadata.labels` or `metadata.annotations` as the [`Object`] trait hands it out. Pinning its
/// source node makes the node's address a safe key: every object with the same (interned) map
/// shares one `StringMap`.
#[derive(Debug)]
struct StringMap {
    source: Arc<CompactMap>,
    map: BTreeMap<String, String>,
}

/// A Kubernetes object of any kind kept as an immutable, structurally shared JSON tree.
///
/// Everything lives in a [`CompactValue`] tree whose strings and subtrees are interned process-wide: objects that are
/// alike (the pods of a deployment: same containers, tolerations, volumes, managedFields) store
/// their common parts once, and identical label maps share one `BTreeMap`. A cache of such
/// objects keeps less memory per object than the object's JSON, where a decoded typed object
/// keeps several times more. Cloning is a few reference-count increments. Name, namespace,
/// resourceVersion and uid are read from the tree's `metadata` node (checked to be strings when
/// the object is built), not kept beside it: a cache holds one such struct per object, and
/// four more pointers to strings the tree already holds would be a third of what it keeps
/// per object apart from the tree itself. Labels and annotations are handed out as the
/// `BTreeMap`s the [`Object`] trait asks for, made on an object's first read of them and shared
/// by every object with the same map: a cache whose objects nobody asks for labels keeps none
/// (a patched object's label map of its own cost about 0.7 KB, and a large annotation such as
/// `last-applied-configuration` was held twice, in the tree and in the map).
///
/// Decoding rejects, with an error naming the field, a non-object, a `metadata` that is not an
/// object, name/namespace/resourceVersion/uid that are not strings, and labels or annotations
/// whose values are not strings (the API server never sends these). Reading fields:
/// [`get`](Self::get); a typed view on demand: [`to_typed`](Self::to_typed).
#[derive(Clone, Debug)]
pub struct CompactObject {
    root: CompactValue,
    /// `metadata.labels`, once read.
    labels: OnceLock<Option<Arc<StringMap>>>,
    /// `metadata.annotations`, once read.
    annotations: OnceLock<Option<Arc<StringMap>>>,
}

impl CompactObject {
    /// The object `root` holds; it must be a JSON object.
    pub fn from_value(root: CompactValue) -> Result<Self, Error> {
        let Some(_) = root.as_object() else {
            return Err(Error::decode("object", "not a JSON object"));
        };
        let meta = match root.get("metadata") {
            None | Some(CompactValue::Null) => None,
            Some(m @ CompactValue::Object(_)) => Some(m),
            Some(_) => return Err(Error::decode("object", "metadata is not an object")),
        };
        for field in META_STRINGS {
            check_string(meta, field)?;
        }
        check_string_map(meta, "labels")?;
        check_string_map(meta, "annotations")?;
        Ok(CompactObject {
            root,
            labels: OnceLock::new(),
            annotations: OnceLock::new(),
        })
    }

    /// Converts a `serde_json::Value` (interning it).
    pub fn from_json(value: &serde_json::Value) -> Result<Self, Error> {
        Self::from_value(CompactValue::from(value))
    }

    /// The whole object as a `serde_json::Value`.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::from(&self.root)
    }

    /// Decodes the object into a typed struct (e.g. a k8s-openapi `Pod`) on demand, straight
    /// from the shared tree (no JSON text or `serde_json::Value` in between).
    pub fn to_typed<T: DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        T::deserialize(&self.root)
    }

    /// The whole object as a tree.
    pub fn as_value(&self) -> &CompactValue {
        &self.root
    }

    /// The value at a path, e.g. `obj.get(&["spec", "nodeName"])` (array items by index).
    pub fn get(&self, path: &[&str]) -> Option<&CompactValue> {
        self.root.pointer(path)
    }

    /// Whether both hold the very same tree (one pointer compare), so whatever was computed from
    /// one holds for the other.
    pub fn same_tree(&self, other: &CompactObject) -> bool {
        self.root.same(&other.root)
    }

    /// Whether the label and the annotation map were made (for tests).
    #[cfg(test)]
    pub(crate) fn maps_made(&self) -> (bool, bool) {
        (
            self.labels.get().is_some(),
            self.annotations.get().is_some(),
        )
    }

    /// `metadata.<field>` if it is a string (one of [`META_STRINGS`], checked when built).
    fn meta_str(&self, field: &str) -> Option<&str> {
        self.root.get("metadata")?.get(field)?.as_str()
    }

    /// A copy with `metadata.resourceVersion` set to `rv`; everything else is shared.
    pub fn with_resource_version(&self, rv: &str) -> Self {
        let meta = self.root.get("metadata").cloned().unwrap_or_default();
        let meta = meta.with_member("resourceVersion", CompactValue::string(rv));
        let mut copy = self.clone();
        copy.root = self.root.with_member("metadata", meta);
        copy
    }
}

/// The `metadata` fields the [`Object`] trait reads as strings.
const META_STRINGS: [&str; 4] = ["name", "namespace", "resourceVersion", "uid"];

/// Fails unless `metadata.<field>` is a string, null or absent.
fn check_string(meta: Option<&CompactValue>, field: &str) -> Result<(), Error> {
    match meta.and_then(|m| m.get(field)) {
        None | Some(CompactValue::Null | CompactValue::String(_)) => Ok(()),
        Some(_) => Err(Error::decode(
            "object",
            format!("metadata.{field} is not a string"),
        )),
    }
}

/// Fails unless `metadata.<field>` is an object of strings, null or absent; returns it.
fn check_string_map<'a>(
    meta: Option<&'a CompactValue>,
    field: &str,
) -> Result<Option<&'a Arc<CompactMap>>, Error> {
    let source = match meta.and_then(|m| m.get(field)) {
        None | Some(CompactValue::Null) => return Ok(None),
        Some(CompactValue::Object(o)) => o,
        Some(_) => {
            return Err(Error::decode(
                "object",
                format!("metadata.{field} is not an object"),
            ))
        }
    };
    if let Some((k, _)) = source.iter().find(|(_, v)| v.as_str().is_none()) {
        return Err(Error::decode(
            "object",
            format!("metadata.{field}.{k} is not a string"),
        ));
    }
    Ok(Some(source))
}

/// `metadata.<field>` (checked when the object was built) as the one `StringMap` of its node.
fn string_map(meta: Option<&CompactValue>, field: &str) -> Option<Arc<StringMap>> {
    let source = check_string_map(meta, field).ok()??;
    Some(STRING_MAPS.intern(
        hash_source(source),
        source,
        |m, source| Arc::ptr_eq(&m.source, source),
        |source| {
            let map = source
                .iter()
                .map(|(k, v)| (k.to_string(), v.as_str().unwrap_or_default().to_string()))
                .collect();
            Arc::new(StringMap {
                source: source.clone(),
                map,
            })
        },
    ))
}

/// Roots whose last holder dropped them since every table was last pruned.
static DEAD_ROOTS: AtomicUsize = AtomicUsize::new(0);
/// Entries the tables held after that prune.
static ENTRIES_AFTER_PRUNE: AtomicUsize = AtomicUsize::new(0);
/// Prunes so far (for tests).
#[cfg(test)]
pub(crate) static PRUNES: AtomicUsize = AtomicUsize::new(0);
/// Dead roots that always make a prune due: what a dropped cache may leave pinned at most.
const MIN_DEAD_ROOTS: usize = 64;

/// Forgets every prune, as a process that has pruned nothing yet (for tests).
#[cfg(test)]
pub(crate) fn forget_prunes() {
    DEAD_ROOTS.store(0, Ordering::Relaxed);
    ENTRIES_AFTER_PRUNE.store(0, Ordering::Relaxed);
}

/// Counts an object dropped with its root (nothing else holds the root, so its own nodes and
/// strings die with it) and prunes every interning table once an eighth as many objects died as
/// the tables held entries after the last prune, or, before the first, when the 64th died (an
/// object keeps at least one, its name, in them; its root and metadata are not there, see
/// `unique.rs`): a shard prunes itself only when it would grow, so a cache dropped while nothing
/// interns would keep its values' allocations pinned by their `Weak` entries (10k ConfigMaps:
/// 14 MB of 18). The work is O(entries) per prune, due after O(entries / 8) deaths.
impl Drop for CompactObject {
    fn drop(&mut self) {
        let CompactValue::Object(root) = &self.root else {
            return;
        };
        if Arc::strong_count(root) > 1 {
            return;
        }
        let dead = DEAD_ROOTS.fetch_add(1, Ordering::Relaxed) + 1;
        let mut after_prune = ENTRIES_AFTER_PRUNE.load(Ordering::Relaxed);
        if after_prune == 0 && dead == MIN_DEAD_ROOTS {
            // No prune yet, so no count to go by: the tables' size now is the baseline. Without
            // it the first prune, a walk of every table, came after 64 deaths however large the
            // cache (10k ConfigMaps: 1.2 ms in the way of a watch event to its reconcile).
            after_prune = table_entries();
            ENTRIES_AFTER_PRUNE.store(after_prune, Ordering::Relaxed);
        }
        let due = (after_prune / 8).max(MIN_DEAD_ROOTS);
        if dead >= due
            && DEAD_ROOTS
                .compare_exchange(dead, 0, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            STRING_MAPS.prune();
            ENTRIES_AFTER_PRUNE.store(prune_tables(), Ordering::Relaxed);
            #[cfg(test)]
            PRUNES.fetch_add(1, Ordering::Relaxed);
        }
    }
}

impl Object for CompactObject {
    fn name(&self) -> &str {
        self.meta_str("name").unwrap_or_default()
    }
    fn namespace(&self) -> Option<&str> {
        self.meta_str("namespace")
    }
    fn resource_version(&self) -> Option<&str> {
        self.meta_str("resourceVersion")
    }
    fn uid(&self) -> Option<&str> {
        self.meta_str("uid")
    }
    fn labels(&self) -> Option<&BTreeMap<String, String>> {
        let map = self
            .labels
            .get_or_init(|| string_map(self.root.get("metadata"), "labels"));
        map.as_ref().map(|m| &m.map)
    }
    fn annotations(&self) -> Option<&BTreeMap<String, String>> {
        let map = self
            .annotations
            .get_or_init(|| string_map(self.root.get("metadata"), "annotations"));
        map.as_ref().map(|m| &m.map)
    }
    fn generation(&self) -> Option<i64> {
        self.get(&["metadata", "generation"])?.as_i64()
    }
    fn is_deleting(&self) -> bool {
        self.get(&["metadata", "deletionTimestamp"])
            .is_some_and(|t| !t.is_null())
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.get(&["metadata", "finalizers"])
            .and_then(CompactValue::as_array)
            .is_some_and(|f| f.iter().any(|x| x.as_str() == Some(name)))
    }
    /// Entries missing a string field are passed over: the API server rejects them on write.
    fn owner_references(&self) -> Vec<OwnerRef<'_>> {
        let Some(refs) = self
            .get(&["metadata", "ownerReferences"])
            .and_then(CompactValue::as_array)
        else {
            return Vec::new();
        };
        refs.iter()
            .filter_map(|r| {
                let s = |k| r.get(k).and_then(CompactValue::as_str);
                let b = |k| r.get(k).and_then(CompactValue::as_bool) == Some(true);
                Some(OwnerRef {
                    api_version: s("apiVersion")?,
                    kind: s("kind")?,
                    name: s("name")?,
                    uid: s("uid")?,
                    controller: b("controller"),
                    block_owner_deletion: b("blockOwnerDeletion"),
                })
            })
            .collect()
    }
}

/// Two objects are equal when their JSON is.
impl PartialEq for CompactObject {
    fn eq(&self, other: &Self) -> bool {
        self.root == other.root
    }
}

impl Serialize for CompactObject {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.root.serialize(s)
    }
}

impl<'de> Deserialize<'de> for CompactObject {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let root = CompactValue::deserialize(d)?;
        CompactObject::from_value(root).map_err(serde::de::Error::custom)
    }
}
