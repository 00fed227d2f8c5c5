//! What the list and watch decoders do to each object right after decoding it, on the thread
//! that decoded it.
//!
//! serde_json gives no length before an array, so serde grows each decoded `Vec` by doubling:
//! a decoded k8s-openapi object keeps spare room (a ConfigMap's one `managedFields` entry sits
//! in a `Vec` with room for four, ≈ 500 bytes). Harmless for an object read and dropped; a cache
//! that keeps every object pays it on each (≈ 10% of a cache of ConfigMaps). A clone has exact
//! capacities. Made right after the decode on the decoding thread, the original is freed before
//! the next object decodes and the next decode reuses its memory, so the kept copies pack
//! densely; cloning later, on another thread, frees the originals among the copies and leaves
//! the heap fragmented (measured: higher peak RSS than no copy at all).

/// Applied to every object a list or watch decodes: [`keep`] (the default) or [`exact_copy`].
pub type Trim<K> = fn(K) -> K;

/// The object as decoded.
pub fn keep<K>(obj: K) -> K {
    obj
}

/// A copy of the object with every `Vec` and `String` at its exact length (see the module docs).
pub fn exact_copy<K: Clone>(obj: K) -> K {
    obj.clone()
}
