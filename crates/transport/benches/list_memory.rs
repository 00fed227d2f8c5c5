//! Peak memory of listing 100k ConfigMaps: the streaming decoder against buffering the body
//! and decoding it (what client-go and kube-rs do). Each mode runs in a fresh child process
//! and reports its peak RSS (VmHWM) above the RSS it started with. The streaming modes get the
//! body as 64 KiB chunks generated on the fly, as from the network; the buffered mode collects
//! the same chunks into one buffer first, as `collect()` on a response body does.
//!
//! `cargo bench -p kcache-transport --bench list_memory`

#[allow(dead_code)] // the watch generator is for the decode bench
#[path = "support/gen.rs"]
mod gen;

use std::collections::VecDeque;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::ObjectList;
use kcache_transport::decode::{ListDecoder, DEFAULT_MAX_OBJECT_SIZE};

const N: usize = 100_000;
const CHUNK: usize = 64 * 1024;
const MODES: [&str; 3] = ["buffered", "streaming_keep", "streaming_drop"];

fn status_kib(field: &str) -> u64 {
    let s = std::fs::read_to_string("/proc/self/status").unwrap();
    s.lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap()
}

fn run(mode: &str) -> (usize, u64) {
    let base = status_kib("VmRSS:");
    let count = match mode {
        "buffered" => {
            let body = gen::list_body(N);
            let list: ObjectList<ConfigMap> = serde_json::from_slice(&body).unwrap();
            list.items.len()
        }
        _ => {
            let keep = mode == "streaming_keep";
            let mut d = ListDecoder::<ConfigMap>::new(DEFAULT_MAX_OBJECT_SIZE);
            let mut out = VecDeque::new();
            let mut items = Vec::new();
            let mut count = 0;
            for chunk in gen::list_chunks(N, CHUNK) {
                d.push(&chunk, &mut out).unwrap();
                count += out.len();
                if keep {
                    items.extend(out.drain(..));
                } else {
                    out.clear();
                }
            }
            d.finish().unwrap();
            count
        }
    };
    (count, status_kib("VmHWM:").saturating_sub(base))
}

fn main() {
    if let Some(mode) = std::env::args().find(|a| MODES.contains(&a.as_str())) {
        let (count, peak_kib) = run(&mode);
        println!("{mode} {count} {peak_kib}");
        return;
    }
    let body_len: usize = gen::list_chunks(N, CHUNK).map(|c| c.len()).sum();
    println!("list of {N} ConfigMaps, body {} MiB", body_len >> 20);
    let mut peaks = Vec::new();
    for mode in MODES {
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .arg(mode)
            .output()
            .unwrap();
        let line = String::from_utf8(out.stdout).unwrap();
        let fields: Vec<&str> = line.split_whitespace().collect();
        let peak: u64 = fields[2].parse().unwrap();
        assert_eq!(fields[1], N.to_string(), "{mode} decoded every item");
        println!(
            "{mode:>15}: peak RSS above start {:>7.1} MiB",
            peak as f64 / 1024.0
        );
        peaks.push(peak as f64);
    }
    println!(
        "streaming_keep / buffered = {:.2}; streaming_drop / buffered = {:.3}",
        peaks[1] / peaks[0],
        peaks[2] / peaks[0]
    );
}
