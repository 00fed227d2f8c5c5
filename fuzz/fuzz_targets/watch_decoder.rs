//! The watch and list decoders on arbitrary bytes split at arbitrary points: they must never
//! panic, and chunking must never change the result.
#![no_main]

use std::collections::VecDeque;

use kcache_core::DynamicObject;
use kcache_transport::decode::{ListDecoder, WatchDecoder};
use libfuzzer_sys::fuzz_target;

const MAX: usize = 64 * 1024;

/// Event type names, "error" for an event that does not decode (the body goes on after it, as
/// the decoder promises) and "broken" where the framing broke (the body ends there), from `data`
/// fed in pieces of `step` bytes.
fn watch(data: &[u8], step: usize) -> Vec<String> {
    let mut d = WatchDecoder::<DynamicObject>::new(MAX);
    let mut seen = Vec::new();
    for chunk in data.chunks(step) {
        let framed = d.push_each(chunk, &mut |ev| {
            seen.push(ev.map_or_else(|_| "error".into(), |e| e.type_name().to_string()))
        });
        if framed.is_err() {
            seen.push("broken".into());
            return seen;
        }
    }
    if d.finish().is_err() {
        seen.push("broken".into());
    }
    seen
}

/// Item names (or "error") and the resourceVersion decoded from a list body.
fn list(data: &[u8], step: usize) -> Vec<String> {
    let mut d = ListDecoder::<DynamicObject>::new(MAX);
    let mut out = VecDeque::new();
    let mut seen = Vec::new();
    for chunk in data.chunks(step) {
        let r = d.push(chunk, &mut out);
        seen.extend(out.drain(..).map(|o| o.metadata.name));
        if r.is_err() {
            seen.push("error".into());
            return seen;
        }
    }
    match d.finish() {
        Ok(meta) => seen.push(format!("rv={:?}", meta.resource_version)),
        Err(_) => seen.push("error".into()),
    }
    seen
}

fuzz_target!(|input: &[u8]| {
    let Some((&step, data)) = input.split_first() else {
        return;
    };
    let step = usize::from(step).max(1);
    assert_eq!(watch(data, data.len().max(1)), watch(data, step));
    assert_eq!(list(data, data.len().max(1)), list(data, step));
});
