//! `Compact<K>`: a typed object (a k8s-openapi `Pod`) kept as a `CompactObject`, checked to
//! decode as `K` when it is built, and turned back into `K` on demand.

use std::any::type_name;
use std::fmt;
use std::marker::PhantomData;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use kcache_core::{Error, Object, Resource};

use super::de::Reader;
use super::object::CompactObject;
use super::value::CompactValue;

/// A `K` stored compactly: its JSON as a structurally shared [`CompactObject`], the typed `K`
/// built from it when asked ([`to_typed`](Self::to_typed)).
///
/// Every way of building one checks that the tree decodes as `K`, so a value that would not
/// materialize never gets in: decoding a watch event or list item as `Compact<Pod>` fails, with
/// the object's namespace/name in the error, exactly where decoding it as `Pod` would. The check
/// decodes `K` and drops it, except the values that take any JSON (`managedFields[].fieldsV1`),
/// which cannot fail and are not built, and kcache-core's `ObjectMeta` (a
/// `PartialObjectMeta`'s), checked without allocating its strings (kcache-codec, an internal
/// crate, recognizes both by the names they ask the decoder for). A read is
/// a serde decode of `K` straight from the shared tree (no JSON text, no `serde_json::Value`),
/// whose cost grows with the object's size only.
///
/// `K`'s [`Resource`] is forwarded, so `Api::<Compact<Pod>>::all(client)` lists and watches pods
/// into this form directly, and an informer, FIFO or indexer over `Compact<K>` keeps every object
/// compact. Fields a type does not have are dropped by `to_typed` as decoding `K` from JSON
/// drops them; the tree keeps them.
pub struct Compact<K> {
    object: CompactObject,
    kind: PhantomData<fn() -> K>,
}

impl<K> Compact<K> {
    /// The object's tree, for reading fields by path without materializing `K`.
    pub fn object(&self) -> &CompactObject {
        &self.object
    }

    /// The value at a path, e.g. `pod.get(&["spec", "nodeName"])` (array items by index).
    pub fn get(&self, path: &[&str]) -> Option<&CompactValue> {
        self.object.get(path)
    }

    /// A copy with `metadata.resourceVersion` set to `rv`; everything else is shared.
    pub fn with_resource_version(&self, rv: &str) -> Self {
        Compact {
            object: self.object.with_resource_version(rv),
            kind: PhantomData,
        }
    }
}

impl<K: DeserializeOwned> Compact<K> {
    /// Checks that `object` decodes as `K`; the error names the object and what was wrong.
    pub fn from_object(object: CompactObject) -> Result<Self, Error> {
        let compact = Compact {
            object,
            kind: PhantomData,
        };
        compact.check()?;
        Ok(compact)
    }

    /// Whether the tree decodes as `K`, found by decoding it and dropping the result, except
    /// for the values that take any JSON (`managedFields[].fieldsV1`), which cannot fail and
    /// are not built (see `de.rs`). Debug builds decode in full too and panic if the two differ.
    fn check(&self) -> Result<(), Error> {
        let checked = K::deserialize(Reader::checking(self.object.as_value()))
            .map(drop)
            .map_err(|e| not_a::<K>(&self.object, e));
        #[cfg(debug_assertions)]
        if let (Ok(()), Err(e)) | (Err(e), Ok(_)) = (&checked, &self.to_typed().map(drop)) {
            panic!(
                "the check of a {} disagrees with decoding it: {e}",
                short_name::<K>()
            );
        }
        checked
    }

    /// The typed object, decoded from the shared tree (it allocates only `K`'s own fields).
    /// It fails only if `K`'s decoding is not deterministic: the tree was checked to decode as
    /// `K` when this value was built.
    pub fn to_typed(&self) -> Result<K, Error> {
        K::deserialize(self.object.as_value()).map_err(|e| not_a::<K>(&self.object, e))
    }
}

impl<K: Serialize + DeserializeOwned> Compact<K> {
    /// `obj` in compact form (through its JSON form; for objects built in code, not the
    /// informer's path, which decodes the wire straight into this form).
    pub fn from_typed(obj: &K) -> Result<Self, Error> {
        let json = serde_json::to_value(obj).map_err(|e| Error::decode(short_name::<K>(), e))?;
        Self::from_object(CompactObject::from_json(&json)?)
    }
}

/// The error of an object that does not decode as `K`, naming it as `namespace/name`.
fn not_a<K>(object: &CompactObject, e: serde_json::Error) -> Error {
    let key = match object.namespace() {
        Some(ns) if !ns.is_empty() => format!("{ns}/{}", object.name()),
        _ => object.name().to_string(),
    };
    Error::decode(format!("{} {key:?}", short_name::<K>()), e)
}

/// `Pod` for `k8s_openapi::api::core::v1::Pod`.
fn short_name<K>() -> &'static str {
    let full = type_name::<K>();
    let path = full.split('<').next().unwrap_or(full);
    path.rsplit("::").next().unwrap_or(path)
}

impl<K> Clone for Compact<K> {
    fn clone(&self) -> Self {
        Compact {
            object: self.object.clone(),
            kind: PhantomData,
        }
    }
}

impl<K> fmt::Debug for Compact<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple(&format!("Compact<{}>", short_name::<K>()))
            .field(&self.object)
            .finish()
    }
}

/// Two objects are equal when their JSON is.
impl<K> PartialEq for Compact<K> {
    fn eq(&self, other: &Self) -> bool {
        self.object == other.object
    }
}

impl<K: Resource> Resource for Compact<K> {
    const GROUP: &'static str = K::GROUP;
    const VERSION: &'static str = K::VERSION;
    const KIND: &'static str = K::KIND;
    const PLURAL: &'static str = K::PLURAL;
    const NAMESPACED: bool = K::NAMESPACED;
}

impl<K: 'static> Object for Compact<K> {
    fn name(&self) -> &str {
        self.object.name()
    }
    fn namespace(&self) -> Option<&str> {
        self.object.namespace()
    }
    fn resource_version(&self) -> Option<&str> {
        self.object.resource_version()
    }
    fn uid(&self) -> Option<&str> {
        self.object.uid()
    }
    fn labels(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.object.labels()
    }
    fn annotations(&self) -> Option<&std::collections::BTreeMap<String, String>> {
        self.object.annotations()
    }
    fn generation(&self) -> Option<i64> {
        self.object.generation()
    }
    fn is_deleting(&self) -> bool {
        self.object.is_deleting()
    }
    fn has_finalizer(&self, name: &str) -> bool {
        self.object.has_finalizer(name)
    }
    fn owner_references(&self) -> Vec<kcache_core::OwnerRef<'_>> {
        self.object.owner_references()
    }
}

impl<K> Serialize for Compact<K> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.object.serialize(s)
    }
}

/// Decodes the JSON into the shared tree, then checks it decodes as `K`.
impl<'de, K: DeserializeOwned> Deserialize<'de> for Compact<K> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let object = CompactObject::deserialize(d)?;
        Compact::from_object(object).map_err(serde::de::Error::custom)
    }
}
