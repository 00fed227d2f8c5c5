//! `informer --account`: where the informer's memory goes, measured (what docs/benchmarks.md's
//! "where the memory goes" rests on).
//!
//! The counting allocator ([`crate::heap`]) runs from the start of the scenario, so live heap
//! bytes and their high-water mark are exact. What RSS holds beyond them is the allocator's
//! (pages freed but not yet returned, partly used pages), the binary and its libraries, and
//! thread stacks, which [`stack_rss_bytes`] reads from `/proc/self/smaps`. After the sync,
//! [`weigh`] splits the live heap: the same list is decoded once more into a `Vec` (the objects
//! alone, as the cache holds them: one `Arc` each), then the informer is shut down and dropped
//! (the cache with its indexes, the FIFO, the handler's thread and buffers, the watch).

use std::mem::size_of;

use kcache_core::{ListParams, Object};
use kcache_informer::{SharedIndexInformer, SharedInformerFactory};
use kcache_transport::Api;
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::heap::{heap_in_use, heap_peak};
use crate::proc_status::{peak_rss_bytes, rss_bytes, threads};

/// The process's memory at one moment.
#[derive(Debug, Clone, Copy)]
pub struct Probe {
    heap: isize,
    heap_peak: isize,
    rss: u64,
    peak_rss: u64,
    threads: u64,
    stacks: u64,
}

impl Probe {
    /// Reads the counters now.
    pub fn now() -> Probe {
        Probe {
            heap: heap_in_use(),
            heap_peak: heap_peak(),
            rss: rss_bytes(),
            peak_rss: peak_rss_bytes(),
            threads: threads(),
            stacks: stack_rss_bytes(),
        }
    }

    /// The fields, in bytes.
    pub fn to_json(self) -> Value {
        json!({
            "heap_bytes": self.heap,
            "heap_peak_bytes": self.heap_peak,
            "rss_bytes": self.rss,
            "peak_rss_bytes": self.peak_rss,
            "threads": self.threads,
            "stack_rss_bytes": self.stacks,
        })
    }
}

/// Weighs the decoded objects alone: the same list once more into a `Vec`, counted as the
/// plain cache holds them (one `Arc` each). Only the plain storage mode holds decoded `K`s.
pub async fn weigh_objects<K>(lister: &Api<K>) -> Value
where
    K: Object + DeserializeOwned,
{
    let before = heap_in_use();
    let params = ListParams {
        resource_version: Some("0".into()),
        ..ListParams::default()
    };
    match lister.list(&params).await {
        Ok(list) => {
            let held = heap_in_use() - before;
            let n = list.items.len() as isize;
            let vec_slots = (list.items.capacity() * size_of::<K>()) as isize;
            // As the cache holds them: each in an `Arc` (two counters, then the object).
            let arc = (size_of::<K>() + 2 * size_of::<usize>()) as isize;
            json!({
                "objects": n,
                "bytes": held - vec_slots + n * arc,
                "inline_bytes_per_object": size_of::<K>(),
            })
        }
        Err(e) => json!({ "error": e.to_string() }),
    }
}

/// After the sync: the probe at sync, the decoded objects (`objects`, from [`weigh_objects`]
/// where the storage mode holds `K`s) and the whole informer's heap (what shutting it down and
/// dropping it frees). `baseline` was read before the factory started.
pub async fn weigh<S: Object>(
    baseline: Probe,
    at_sync: Probe,
    objects: Option<Value>,
    factory: SharedInformerFactory,
    informer: SharedIndexInformer<S>,
) -> Value {
    let cached = informer.indexer().len();
    let before_drop = heap_in_use();
    factory.shutdown().await;
    drop(informer);
    drop(factory);
    // Tasks and threads wind down after the cancel; let them.
    tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    let informer_bytes = before_drop - heap_in_use();
    json!({
        "baseline": baseline.to_json(),
        "at_sync": at_sync.to_json(),
        "cached": cached,
        "decoded_objects": objects,
        "informer_heap_bytes": informer_bytes,
        "after_shutdown": Probe::now().to_json(),
    })
}

/// Resident bytes of thread stacks: the main thread's `[stack]` mapping plus every anonymous
/// read-write mapping directly above a one-page `---p` guard (how glibc lays out a pthread's
/// stack; the allocator's arenas have no guard page below them).
pub fn stack_rss_bytes() -> u64 {
    let Ok(smaps) = std::fs::read_to_string("/proc/self/smaps") else {
        return 0;
    };
    let mut total = 0;
    let mut previous_guard_end: Option<u64> = None;
    let mut counting = false;
    for line in smaps.lines() {
        let mut fields = line.split_whitespace();
        let first = fields.next().unwrap_or("");
        if let Some((start, end)) = first.split_once('-').and_then(|(a, b)| {
            Some((
                u64::from_str_radix(a, 16).ok()?,
                u64::from_str_radix(b, 16).ok()?,
            ))
        }) {
            let perms = fields.next().unwrap_or("");
            let path = line.split_whitespace().nth(5);
            counting = path == Some("[stack]")
                || (perms == "rw-p" && path.is_none() && previous_guard_end == Some(start));
            previous_guard_end = (perms == "---p" && end - start == 4096).then_some(end);
        } else if counting {
            if let Some(kb) = line.strip_prefix("Rss:") {
                total += kb
                    .trim()
                    .trim_end_matches("kB")
                    .trim()
                    .parse::<u64>()
                    .unwrap_or(0)
                    * 1024;
            }
        }
    }
    total
}
