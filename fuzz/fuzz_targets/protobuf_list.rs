//! The protobuf list splitter and item decoder on arbitrary bytes split at arbitrary points:
//! they must never panic, and chunking must never change the result. Each item decodes both as
//! JSON (`serde_json::Value`) and as kcache-core's `PartialObjectMeta` / `DynamicObject`; the two
//! must agree on the object's metadata, and an item refused for a field the decoder does not
//! know (which the transport then reads in JSON) is refused whatever it decodes into.
#![no_main]

use kcache_core::{DynamicObject, PartialObjectMeta};
use kcache_transport::decode::{is_unknown_field, ItemKind, ListSplitter};
use libfuzzer_sys::fuzz_target;

const MAX: usize = 64 * 1024;

const KINDS: [ItemKind; 3] = [
    ItemKind::PartialObjectMetadata,
    ItemKind::ConfigMap,
    ItemKind::Secret,
];

/// Each item as JSON (or its error), then the list's metadata (or the body's error).
fn split(kind: ItemKind, data: &[u8], step: usize) -> Vec<String> {
    let mut s = ListSplitter::new(kind, MAX);
    let mut seen = Vec::new();
    for chunk in data.chunks(step) {
        let mut items = Vec::new();
        let pushed = s.push(chunk, |index, item| {
            items.push((index, item.to_vec()));
            Ok(())
        });
        for (index, item) in items {
            seen.push(item_seen(&s, index, &item));
        }
        if let Err(e) = pushed {
            seen.push(format!("error: {e}"));
            return seen;
        }
    }
    match s.finish() {
        Ok(meta) => seen.push(format!("rv={:?}", meta.resource_version)),
        Err(e) => seen.push(format!("error: {e}")),
    }
    seen
}

/// One item as JSON, checked against its typed decodes.
fn item_seen(s: &ListSplitter, index: usize, item: &[u8]) -> String {
    let json = s.decode_item::<serde_json::Value>(index, item);
    let partial = s.decode_item::<PartialObjectMeta>(index, item);
    let dynamic = s.decode_item::<DynamicObject>(index, item);
    match json {
        Ok(value) => {
            // What decodes as JSON decodes as metadata, and the same metadata.
            let from_json: PartialObjectMeta = serde_json::from_value(value.clone())
                .expect("protobuf decoded to JSON that is not an object with metadata");
            let partial = partial.expect("decodes as JSON but not as PartialObjectMeta");
            assert_eq!(same(&partial.metadata), same(&from_json.metadata));
            let dynamic = dynamic.expect("decodes as JSON but not as DynamicObject");
            assert_eq!(same(&dynamic.metadata), same(&from_json.metadata));
            value.to_string()
        }
        Err(e) => {
            if is_unknown_field(&e) {
                // The transport reads the list in JSON whatever `K` is: every reader must see
                // the refusal, not skip the field (an earlier error in the item may come first).
                assert!(partial.is_err(), "refused as JSON, decoded as PartialObjectMeta");
                assert!(dynamic.is_err(), "refused as JSON, decoded as DynamicObject");
            }
            format!("item error: {e}")
        }
    }
}

/// Metadata as a JSON value, so `fieldsV1` (kept as raw text) compares by content: the JSON
/// path re-serializes it with its keys sorted, the direct decodes keep the bytes' order.
fn same(meta: &kcache_core::ObjectMeta) -> serde_json::Value {
    serde_json::to_value(meta).expect("metadata serializes")
}

fuzz_target!(|input: &[u8]| {
    let Some((&first, data)) = input.split_first() else {
        return;
    };
    let kind = KINDS[usize::from(first % 3)];
    let step = usize::from(first / 3).max(1);
    assert_eq!(
        split(kind, data, data.len().max(1)),
        split(kind, data, step)
    );
});
