//! Values no other value can share: an object version's `resourceVersion` and every node above
//! it, and the object's own `metadata.uid`.
//!
//! A resourceVersion is different in every object version the server sends, so its string,
//! the `metadata` holding it and the object's root are never equal to anything else alive; nor
//! is an object's uid, but in its own metadata (an owner reference's uid is shared by the
//! owner's children, and stays interned). Interning them costs a table entry each (a 16-byte
//! `Weak`, about twice that with the tables' free space) and a shard lock and probe that always
//! miss: at 10k ConfigMaps, four of an object's ten entries and about 1.2 MB. They are built as
//! plain `Arc`s instead, outside the tables; whatever below them is shared (labels,
//! managedFields, owner references) is still interned. A container is unique when any value
//! decoded inside it is: a per-thread flag that each container clears when it opens and hands
//! up, with what its earlier siblings set, when it closes. The root's `metadata` is recognised
//! by its depth: the containers open on the thread are counted.

use std::cell::Cell;
use std::sync::{Arc, LazyLock};

use super::value::{intern_str, Sharing};

/// The key whose string value is unique. Held, so the interned key stays the canonical one and
/// a key is recognised by its address.
static RESOURCE_VERSION: LazyLock<Arc<str>> = LazyLock::new(|| intern_str("resourceVersion"));

static UID: LazyLock<Arc<str>> = LazyLock::new(|| intern_str("uid"));
static METADATA: LazyLock<Arc<str>> = LazyLock::new(|| intern_str("metadata"));

thread_local! {
    /// Whether a unique value was decoded in the innermost open container so far.
    static SEEN: Cell<bool> = const { Cell::new(false) };
    /// Containers open on this thread: the value being decoded is the root at 1.
    static DEPTH: Cell<u32> = const { Cell::new(0) };
    /// The depth of the root's `metadata` while it is being decoded, else 0.
    static META_DEPTH: Cell<u32> = const { Cell::new(0) };
}

/// Whether the member with this (interned) key, in the container being decoded, holds a unique
/// value.
pub(crate) fn is_unique_key(key: &Arc<str>) -> bool {
    Arc::ptr_eq(key, &RESOURCE_VERSION)
        || (Arc::ptr_eq(key, &UID) && META_DEPTH.get() == DEPTH.get() && DEPTH.get() == 2)
}

/// Decodes the value of `key` in the container being decoded with `decode`: the root's
/// `metadata` is marked as such while it is.
pub(crate) fn member<T>(key: &Arc<str>, decode: impl FnOnce() -> T) -> T {
    if DEPTH.get() != 1 || !Arc::ptr_eq(key, &METADATA) {
        return decode();
    }
    let outer = META_DEPTH.replace(2);
    let value = decode();
    META_DEPTH.set(outer);
    value
}

/// Marks the value just decoded as unique: the containers around it are too.
pub(crate) fn mark() {
    SEEN.set(true);
}

/// A container being decoded; [`close`](Self::close) tells whether it is unique.
pub(crate) struct Scope {
    /// What the enclosing container had seen before this one opened.
    outer: bool,
    /// The depth before it opened, restored when it is dropped (decoded or failed).
    depth: u32,
}

impl Scope {
    pub(crate) fn open() -> Self {
        let depth = DEPTH.get();
        DEPTH.set(depth + 1);
        Scope {
            outer: SEEN.replace(false),
            depth,
        }
    }

    /// This container's sharing; the enclosing one learns whether it holds a unique value.
    pub(crate) fn close(self) -> Sharing {
        let mine = SEEN.get();
        SEEN.set(self.outer || mine);
        if mine {
            Sharing::Unique
        } else {
            Sharing::Interned
        }
    }
}

impl Drop for Scope {
    fn drop(&mut self) {
        DEPTH.set(self.depth);
        if self.depth == 0 {
            // A failed decode can leave the root's metadata marked.
            META_DEPTH.set(0);
        }
    }
}
