//! What /proc/self/status says about this process: peak and current RSS, threads. Plain std,
//! so `examples/informer_alone.rs` includes this file too.

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
