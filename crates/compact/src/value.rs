//! `CompactValue`: an immutable JSON value whose strings, arrays and objects are hash-consed.

use std::hash::{BuildHasher, Hash, Hasher};
use std::sync::{Arc, LazyLock};

use serde_json::Number;

use super::front;
use super::interner::{Interner, HASHER};

/// Whether a container built from decoded values goes into the interning tables.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Sharing {
    /// Hash-consed: equal values are one `Arc`.
    Interned,
    /// Holds a value no other can equal: a plain `Arc`.
    Unique,
}

/// The members of a JSON object, sorted by key, keys unique.
pub type CompactMap = [(Arc<str>, CompactValue)];

static STRINGS: LazyLock<Interner<str>> = LazyLock::new(|| Interner::new(hash_str));
static ARRAYS: LazyLock<Interner<[CompactValue]>> = LazyLock::new(|| Interner::new(hash_items));
static OBJECTS: LazyLock<Interner<CompactMap>> = LazyLock::new(|| Interner::new(hash_members));

fn hash_str(s: &str) -> u64 {
    HASHER.hash_one(s)
}

/// An array's hash from its (interned) items' addresses: O(items), not O(subtree).
fn hash_items(items: &[CompactValue]) -> u64 {
    let mut h = HASHER.build_hasher();
    items.len().hash(&mut h);
    for v in items {
        v.hash_shallow(&mut h);
    }
    h.finish()
}

/// An object's hash from its (interned) keys' and values' addresses.
fn hash_members(members: &CompactMap) -> u64 {
    let mut h = HASHER.build_hasher();
    members.len().hash(&mut h);
    for (k, v) in members {
        std::ptr::hash(Arc::as_ptr(k) as *const u8, &mut h);
        v.hash_shallow(&mut h);
    }
    h.finish()
}

/// An immutable JSON value in which equal strings, arrays and objects are stored once.
///
/// Built through [`CompactValue::string`], [`CompactValue::array`], [`CompactValue::object`],
/// `From<&serde_json::Value>` or `Deserialize` (not by hand from the variants, which would still
/// be correct but not shared), every string and container is interned in a
/// process-wide, weakly held table: a value equal to one that is alive anywhere in the process is
/// not stored again, it is the same `Arc`. Pods of one deployment share their containers,
/// tolerations, volumes, owner references and managedFields this way, so a cache of them keeps
/// little more than each pod's unique fields. Cloning is a reference-count increment.
///
/// Lossless with respect to `serde_json::Value` (as this workspace builds it, without
/// `preserve_order`): numbers are `serde_json::Number`s (integers exact, other numbers `f64`),
/// object keys are sorted, and a repeated key keeps its last value.
#[derive(Clone, Debug, Default)]
pub enum CompactValue {
    /// `null`.
    #[default]
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string (interned).
    String(Arc<str>),
    /// An array (interned).
    Array(Arc<[CompactValue]>),
    /// An object, members sorted by key (interned).
    Object(Arc<CompactMap>),
}

impl CompactValue {
    /// The interned string `s`.
    pub fn string(s: &str) -> Self {
        CompactValue::String(intern_str(s))
    }

    /// The interned array of these items.
    pub fn array(mut items: Vec<CompactValue>) -> Self {
        Self::array_from(&mut items, 0, Sharing::Interned)
    }

    /// The array of the items `stack` holds from `start` on, which it drains: the decoder
    /// builds every array on one reused stack, so a container costs no `Vec` of its own (only
    /// the node, and only when it is new). Interned unless `sharing` says it cannot be shared.
    pub(crate) fn array_from(
        stack: &mut Vec<CompactValue>,
        start: usize,
        sharing: Sharing,
    ) -> Self {
        if sharing == Sharing::Unique {
            return CompactValue::Array(stack.drain(start..).collect());
        }
        let hash = hash_items(&stack[start..]);
        // A new array takes the items over (moved, not cloned: a clone of a child is an atomic
        // increment, and its drop with the stack's a decrement); one allocation, at its length.
        let arc = front::intern(
            &ARRAY_FRONT,
            &ARRAYS,
            hash,
            stack.drain(start..),
            |a, items| {
                let items = items.as_slice();
                a.len() == items.len() && a.iter().zip(items).all(|(x, y)| x.same(y))
            },
            Arc::from_iter,
        );
        CompactValue::Array(arc)
    }

    /// The interned object of these members; they are sorted by key and a repeated key keeps its
    /// last value.
    pub fn object<K: AsRef<str>>(members: impl IntoIterator<Item = (K, CompactValue)>) -> Self {
        Self::from_members(
            members
                .into_iter()
                .map(|(k, v)| (intern_str(k.as_ref()), v))
                .collect(),
        )
    }

    /// [`object`](Self::object) for keys that are already interned.
    pub(crate) fn from_members(mut members: Vec<(Arc<str>, CompactValue)>) -> Self {
        Self::object_from(&mut members, 0, Sharing::Interned)
    }

    /// The object of the members `stack` holds from `start` on, which it drains (see
    /// [`array_from`](Self::array_from)); they are sorted by key and a repeated key keeps its
    /// last value. Interned unless `sharing` says it cannot be shared.
    pub(crate) fn object_from(
        stack: &mut Vec<(Arc<str>, CompactValue)>,
        start: usize,
        sharing: Sharing,
    ) -> Self {
        let members = &mut stack[start..];
        if !members.is_sorted_by(|a, b| key_order(&a.0, &b.0).is_lt()) {
            // Reverse then stable-sort: the last occurrence of a key comes first and survives.
            members.reverse();
            members.sort_by(|a, b| key_order(&a.0, &b.0));
            if members.windows(2).any(|w| w[0].0 == w[1].0) {
                let mut members = stack.split_off(start);
                members.dedup_by(|later, kept| later.0 == kept.0);
                return Self::object_from(&mut members, 0, sharing);
            }
        }
        if sharing == Sharing::Unique {
            return CompactValue::Object(stack.drain(start..).collect());
        }
        let hash = hash_members(&stack[start..]);
        // Moved into a new node, not cloned (see `array_from`).
        let arc = front::intern(
            &OBJECT_FRONT,
            &OBJECTS,
            hash,
            stack.drain(start..),
            |o, members| {
                let members = members.as_slice();
                o.len() == members.len()
                    && o.iter()
                        .zip(members)
                        .all(|(x, y)| Arc::ptr_eq(&x.0, &y.0) && x.1.same(&y.1))
            },
            Arc::from_iter,
        );
        CompactValue::Object(arc)
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            CompactValue::String(s) => Some(s),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            CompactValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The number as `i64`, if it is an integer in range.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            CompactValue::Number(n) => n.as_i64(),
            _ => None,
        }
    }

    /// The number as `f64`, if this is a number.
    pub fn as_f64(&self) -> Option<f64> {
        match self {
            CompactValue::Number(n) => n.as_f64(),
            _ => None,
        }
    }

    /// The items, if this is an array.
    pub fn as_array(&self) -> Option<&[CompactValue]> {
        match self {
            CompactValue::Array(a) => Some(a),
            _ => None,
        }
    }

    /// The members (sorted by key), if this is an object.
    pub fn as_object(&self) -> Option<&CompactMap> {
        match self {
            CompactValue::Object(o) => Some(o),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self, CompactValue::Null)
    }

    /// An object member by key, or `None` if this is not an object.
    pub fn get(&self, key: &str) -> Option<&CompactValue> {
        let o = self.as_object()?;
        if o.len() <= SCANNED {
            // `str`'s `==` passes over a key of another length without comparing its bytes:
            // most keys are, where a binary search compares the bytes of every key it probes.
            return o.iter().find(|(k, _)| **k == *key).map(|(_, v)| v);
        }
        o.binary_search_by(|(k, _)| (**k).cmp(key))
            .ok()
            .map(|i| &o[i].1)
    }

    /// The value at a path of object keys (array items by decimal index), e.g.
    /// `["spec", "containers", "0", "image"]`.
    pub fn pointer<S: AsRef<str>>(&self, path: &[S]) -> Option<&CompactValue> {
        path.iter().try_fold(self, |v, seg| v.step(seg.as_ref()))
    }

    /// Whether `self` and `other` hold equal values at `path` (absent from both counts as
    /// equal): `self.pointer(path) == other.pointer(path)`, but walking both at once and done
    /// at the first level where they share a subtree — an object and its update usually share
    /// all but the branch that changed, so this rarely goes deeper than one member.
    pub fn same_at<S: AsRef<str>>(&self, other: &CompactValue, path: &[S]) -> bool {
        let (mut a, mut b) = (Some(self), Some(other));
        for seg in path {
            match (a, b) {
                (Some(x), Some(y)) if x.same(y) => return true,
                (None, None) => return true,
                _ => {}
            }
            a = a.and_then(|v| v.step(seg.as_ref()));
            b = b.and_then(|v| v.step(seg.as_ref()));
        }
        a == b
    }

    /// One step of a path: an object's member, or an array's item by decimal index.
    fn step(&self, seg: &str) -> Option<&CompactValue> {
        match self {
            CompactValue::Array(a) => a.get(seg.parse::<usize>().ok()?),
            _ => self.get(seg),
        }
    }

    /// This object with `key` set to `value` (added or replaced), interned; anything that is
    /// not an object counts as an empty one.
    pub fn with_member(&self, key: &str, value: CompactValue) -> CompactValue {
        let mut members = self.as_object().map(<[_]>::to_vec).unwrap_or_default();
        match members.binary_search_by(|(k, _)| (**k).cmp(key)) {
            Ok(i) => members[i].1 = value,
            Err(i) => members.insert(i, (intern_str(key), value)),
        }
        CompactValue::from_members(members)
    }

    /// Equality of already-interned children: pointers for containers and strings.
    pub(crate) fn same(&self, other: &CompactValue) -> bool {
        match (self, other) {
            (CompactValue::Null, CompactValue::Null) => true,
            (CompactValue::Bool(a), CompactValue::Bool(b)) => a == b,
            (CompactValue::Number(a), CompactValue::Number(b)) => same_number(a, b),
            (CompactValue::String(a), CompactValue::String(b)) => Arc::ptr_eq(a, b),
            (CompactValue::Array(a), CompactValue::Array(b)) => Arc::ptr_eq(a, b),
            (CompactValue::Object(a), CompactValue::Object(b)) => Arc::ptr_eq(a, b),
            _ => false,
        }
    }

    /// Hashes what [`same`](Self::same) compares: O(1) per child, not O(subtree).
    fn hash_shallow(&self, h: &mut impl Hasher) {
        std::mem::discriminant(self).hash(h);
        match self {
            CompactValue::Null => {}
            CompactValue::Bool(b) => b.hash(h),
            CompactValue::Number(n) => n.hash(h),
            CompactValue::String(s) => std::ptr::hash(Arc::as_ptr(s) as *const u8, h),
            CompactValue::Array(a) => std::ptr::hash(Arc::as_ptr(a) as *const u8, h),
            CompactValue::Object(o) => std::ptr::hash(Arc::as_ptr(o) as *const u8, h),
        }
    }
}

/// Members up to which [`CompactValue::get`] scans an object instead of searching it: an
/// object's metadata (about ten members) is read this way six times for every object decoded.
const SCANNED: usize = 16;

thread_local! {
    /// Shared strings this thread met recently (see [`front`]): at most 1024 kept alive.
    static STRING_FRONT: front::Slots<str> = front::slots(1024);
    /// Shared objects and arrays this thread met recently: at most 256 of each kept alive.
    static OBJECT_FRONT: front::Slots<CompactMap> = front::slots(256);
    static ARRAY_FRONT: front::Slots<[CompactValue]> = front::slots(256);
}

/// The interned `Arc<str>` equal to `s` (allocates only the first time `s` is seen).
pub(crate) fn intern_str(s: &str) -> Arc<str> {
    front::intern(
        &STRING_FRONT,
        &STRINGS,
        hash_str(s),
        s,
        |x, s| x == *s,
        Arc::from,
    )
}

/// Keys' order (`str`'s): by their first bytes where they differ, as the keys of most objects
/// do, without a call to compare the rest.
fn key_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.as_bytes().first(), b.as_bytes().first()) {
        (Some(x), Some(y)) if x != y => x.cmp(y),
        _ => a.cmp(b),
    }
}

/// Whether two numbers are written the same: `Number`'s own `==` has `-0.0` equal to `0.0`, and
/// interning by it would hand out one for the other.
fn same_number(a: &Number, b: &Number) -> bool {
    a == b && (!a.is_f64() || a.as_f64().map(f64::to_bits) == b.as_f64().map(f64::to_bits))
}

/// Deep equality, short-cut by pointer identity (interned equal values are the same `Arc`).
impl PartialEq for CompactValue {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (CompactValue::String(a), CompactValue::String(b)) => a == b,
            (CompactValue::Array(a), CompactValue::Array(b)) => Arc::ptr_eq(a, b) || a == b,
            (CompactValue::Object(a), CompactValue::Object(b)) => Arc::ptr_eq(a, b) || a == b,
            _ => self.same(other),
        }
    }
}

impl Eq for CompactValue {}

impl From<&serde_json::Value> for CompactValue {
    fn from(v: &serde_json::Value) -> Self {
        match v {
            serde_json::Value::Null => CompactValue::Null,
            serde_json::Value::Bool(b) => CompactValue::Bool(*b),
            serde_json::Value::Number(n) => CompactValue::Number(n.clone()),
            serde_json::Value::String(s) => CompactValue::string(s),
            serde_json::Value::Array(a) => CompactValue::array(a.iter().map(Into::into).collect()),
            serde_json::Value::Object(o) => {
                CompactValue::object(o.iter().map(|(k, v)| (k, CompactValue::from(v))))
            }
        }
    }
}

impl From<&CompactValue> for serde_json::Value {
    fn from(v: &CompactValue) -> Self {
        match v {
            CompactValue::Null => serde_json::Value::Null,
            CompactValue::Bool(b) => serde_json::Value::Bool(*b),
            CompactValue::Number(n) => serde_json::Value::Number(n.clone()),
            CompactValue::String(s) => serde_json::Value::String(s.to_string()),
            CompactValue::Array(a) => serde_json::Value::Array(a.iter().map(Into::into).collect()),
            CompactValue::Object(o) => serde_json::Value::Object(
                o.iter().map(|(k, v)| (k.to_string(), v.into())).collect(),
            ),
        }
    }
}

/// Prunes the string, array and object tables now (see [`Interner::prune`]); returns the entries
/// left in all three.
pub(crate) fn prune_tables() -> usize {
    STRINGS.prune() + ARRAYS.prune() + OBJECTS.prune()
}

/// Entries every table holds now, dead ones included.
pub(crate) fn table_entries() -> usize {
    STRINGS.entries() + ARRAYS.entries() + OBJECTS.entries()
}

#[cfg(test)]
pub(crate) fn interned_entries() -> (usize, usize, usize) {
    (STRINGS.entries(), ARRAYS.entries(), OBJECTS.entries())
}
