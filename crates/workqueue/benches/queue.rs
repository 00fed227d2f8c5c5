//! Criterion benches of the queue's hot paths: add of a new item, add of a dirty item (collapsed),
//! and a get → done round trip.

// `criterion_group!` defines a public function it cannot document.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;

use criterion::{criterion_group, criterion_main, Criterion};
use kcache_workqueue::Queue;

fn keys(n: usize) -> Vec<Arc<str>> {
    (0..n)
        .map(|i| Arc::from(format!("default/object-{i}")))
        .collect()
}

fn queue_benches(c: &mut Criterion) {
    let keys = keys(10_000);

    c.bench_function("add_dirty", |b| {
        let q = Queue::new();
        keys.iter().for_each(|k| q.add(k.clone()));
        let mut i = 0;
        b.iter(|| {
            q.add(black_box(keys[i % keys.len()].clone()));
            i += 1;
        });
    });

    c.bench_function("add_ref_dirty", |b| {
        let q = Queue::new();
        keys.iter().for_each(|k| q.add(k.clone()));
        let mut i = 0;
        b.iter(|| {
            q.add_ref(black_box(&keys[i % keys.len()]));
            i += 1;
        });
    });

    c.bench_function("add_get_done", |b| {
        let q = Queue::new();
        let mut i = 0;
        b.iter(|| {
            q.add(keys[i % keys.len()].clone());
            let item = q.get_blocking().expect("queued");
            q.done(black_box(&item));
            i += 1;
        });
    });

    c.bench_function("add_10k_then_drain", |b| {
        b.iter(|| {
            let q = Queue::new();
            keys.iter().for_each(|k| q.add(k.clone()));
            while !q.is_empty() {
                let item = q.get_blocking().expect("queued");
                q.done(&item);
            }
        });
    });
}

criterion_group!(benches, queue_benches);
criterion_main!(benches);
