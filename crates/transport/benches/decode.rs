//! The watch and list decoders against plain serde_json decoding of the same bytes into the
//! same types: the physical limit the whole stack is measured against.

// `criterion_group!` defines a public function it cannot document.
#![allow(missing_docs)]

#[path = "support/gen.rs"]
mod gen;

use std::collections::VecDeque;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::{ObjectList, WatchEvent};
use kcache_transport::decode::{ListDecoder, WatchDecoder, DEFAULT_MAX_OBJECT_SIZE};

/// What plain serde_json decodes a watch event into: the same object type.
#[derive(serde::Deserialize)]
struct WireEvent {
    #[serde(rename = "type")]
    _type: String,
    #[serde(rename = "object")]
    _object: ConfigMap,
}

const CHUNK: usize = 16 * 1024;

fn watch(c: &mut Criterion) {
    let body = gen::watch_stream(10_000);
    let mut g = c.benchmark_group("watch_10k_configmaps");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.sample_size(20);
    g.bench_function("kcache_watch_decoder_16k_chunks", |b| {
        b.iter(|| {
            let mut d = WatchDecoder::<ConfigMap>::new(DEFAULT_MAX_OBJECT_SIZE);
            let mut out: VecDeque<WatchEvent<ConfigMap>> = VecDeque::new();
            let mut n = 0;
            for chunk in body.chunks(CHUNK) {
                d.push(chunk, &mut out).unwrap();
                n += out.drain(..).count();
            }
            d.finish().unwrap();
            assert_eq!(n, 10_000);
        })
    });
    g.bench_function("serde_json_stream_deserializer", |b| {
        b.iter(|| {
            let n = serde_json::Deserializer::from_slice(&body)
                .into_iter::<WireEvent>()
                .map(Result::unwrap)
                .count();
            assert_eq!(n, 10_000);
        })
    });
    g.finish();
}

fn list(c: &mut Criterion) {
    let n = 100_000;
    let body = gen::list_body(n);
    let mut g = c.benchmark_group("list_100k_configmaps");
    g.throughput(Throughput::Bytes(body.len() as u64));
    g.sample_size(10);
    g.bench_function("kcache_list_decoder_16k_chunks", |b| {
        b.iter(|| {
            let mut d = ListDecoder::<ConfigMap>::new(DEFAULT_MAX_OBJECT_SIZE);
            let mut out = VecDeque::new();
            let mut items = Vec::with_capacity(n);
            for chunk in body.chunks(CHUNK) {
                d.push(chunk, &mut out).unwrap();
                items.extend(out.drain(..));
            }
            d.finish().unwrap();
            assert_eq!(items.len(), n);
            items
        })
    });
    g.bench_function("serde_json_from_slice", |b| {
        b.iter(|| {
            let list: ObjectList<ConfigMap> = serde_json::from_slice(&body).unwrap();
            assert_eq!(list.items.len(), n);
            list
        })
    });
    g.finish();
}

criterion_group!(benches, watch, list);
criterion_main!(benches);
