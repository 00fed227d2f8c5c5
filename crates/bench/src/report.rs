//! The one JSON line every scenario prints, with the same fields as cgbench's `emit`.

use serde_json::{Map, Value};

/// Peak resident set size (VmHWM) of this process, in bytes; 0 where /proc is unavailable.
pub fn peak_rss_bytes() -> u64 {
    status_bytes("VmHWM:")
}

/// Resets this process's peak RSS to its current RSS (writing `5` to `/proc/self/clear_refs`),
/// so a later [`peak_rss_bytes`] is the peak of what followed. Reported, not fatal, where the
/// kernel refuses.
pub fn reset_peak_rss() {
    if let Err(e) = std::fs::write("/proc/self/clear_refs", "5") {
        eprintln!("kcache-bench: cannot reset the peak RSS: {e}");
    }
}

/// Resident set size now (VmRSS), in bytes; 0 where /proc is unavailable.
pub fn rss_bytes() -> u64 {
    status_bytes("VmRSS:")
}

/// OS threads of this process (`Threads:` of /proc/self/status); 0 where unavailable.
pub fn threads() -> u64 {
    status_number("Threads:").unwrap_or(0)
}

/// A `kB` field of /proc/self/status, in bytes.
fn status_bytes(field: &str) -> u64 {
    status_number(field).map_or(0, |kb| kb * 1024)
}

/// The number a field of /proc/self/status starts with (its unit, if any, dropped).
fn status_number(field: &str) -> Option<u64> {
    std::fs::read_to_string("/proc/self/status")
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

/// Prints `fields` plus `impl`, `scenario`, `allocator` and `peak_rss_bytes` as one JSON line.
pub fn emit(scenario: &str, fields: Value) {
    let mut line = match fields {
        Value::Object(map) => map,
        other => Map::from_iter([("value".to_string(), other)]),
    };
    line.insert(
        "impl".into(),
        format!("kcache-{}", env!("CARGO_PKG_VERSION")).into(),
    );
    line.insert("scenario".into(), scenario.into());
    line.insert(
        "allocator".into(),
        crate::heap::Allocator::current().name().into(),
    );
    line.insert("peak_rss_bytes".into(), peak_rss_bytes().into());
    println!("{}", Value::Object(line));
}
