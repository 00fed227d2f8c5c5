//! The bench binary's global allocator: mimalloc — as a production controller binary would pick:
//! glibc's malloc is slow to free objects on a thread other than the one that allocated them,
//! which is what a FIFO consumer does — counting heap bytes in use, which is how `podsync`
//! measures what a cache retains per object (exact live bytes, where RSS would also count
//! allocator slack and freed pages not yet returned to the OS).
//!
//! Counting is off until a scenario calls [`start_counting`], so the other scenarios pay one
//! relaxed load of a never-written flag per allocation and nothing else.
//!
//! Transparent huge pages are turned off for the process ([`disable_transparent_huge_pages`]):
//! mimalloc asks for them on its arenas, and a first touch then zeroes a whole 2 MiB page. On
//! the project's virtual machines that first touch is what the store scenario measured: the same
//! binary, alternated run by run, inserted 0.54–0.82 M objects/s with huge pages and
//! 1.64–1.73 M/s without (update 0.80–1.08 vs 1.20–1.39 M/s), with fifo and podsync unchanged or
//! faster. It is what mimalloc's own `MIMALLOC_ALLOW_THP=0` does, set from inside the binary.
#![allow(unsafe_code)]

use std::alloc::{GlobalAlloc, Layout};

#[cfg(not(feature = "system-allocator"))]
use mimalloc::MiMalloc;
#[cfg(feature = "system-allocator")]
use std::alloc::System as MiMalloc;
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

static COUNTING: AtomicBool = AtomicBool::new(false);
static IN_USE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static TRACKING_PEAK: AtomicBool = AtomicBool::new(false);

/// Turns transparent huge pages off for this process (`PR_SET_THP_DISABLE`), before any scenario
/// allocates; memory already faulted keeps its pages. A failure (an old kernel) is reported and
/// the bench goes on.
pub fn disable_transparent_huge_pages() {
    // SAFETY: prctl with PR_SET_THP_DISABLE takes plain integer arguments and touches no memory
    // of ours.
    let rc = unsafe { libc::prctl(libc::PR_SET_THP_DISABLE, 1, 0, 0, 0) };
    if rc != 0 {
        eprintln!(
            "kcache-bench: cannot disable transparent huge pages: {}",
            std::io::Error::last_os_error()
        );
    }
}

/// mimalloc's `mi_option_arena_eager_commit` and `mi_option_purge_delay` (their positions in
/// `mi_option_t`, mimalloc.h of the v3 sources libmimalloc-sys builds).
#[cfg(not(feature = "system-allocator"))]
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
#[cfg(not(feature = "system-allocator"))]
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Has mimalloc hand freed pages back to the OS at once (`purge_delay` 0; its default waits
/// 10 ms, and 10× that in arenas) and commit arena memory as it is used (`arena_eager_commit` 0)
/// — what `MIMALLOC_PURGE_DELAY=0 MIMALLOC_ARENA_EAGER_COMMIT=0` do, set from inside the binary.
/// For the informer scenario, where peak RSS is the figure: a list's transient buffers are
/// freed between the pages of decoded objects, and a freed page kept for later is RSS
/// (10k ConfigMaps on kube-apiserver: 84.6 → 75.0 MB, see docs/benchmarks.md). The
/// throughput scenarios keep mimalloc's defaults.
pub fn release_freed_memory_promptly() {
    #[cfg(not(feature = "system-allocator"))]
    // SAFETY: `mi_option_set` takes plain integers; mimalloc reads options on every use, so
    // changing them while it runs is what the function is for.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

/// mimalloc, counting allocated-minus-freed bytes while counting is on.
struct Counting;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count(delta: isize) {
    if COUNTING.load(Ordering::Relaxed) {
        let now = IN_USE.fetch_add(delta, Ordering::Relaxed) + delta;
        if delta > 0 && TRACKING_PEAK.load(Ordering::Relaxed) {
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
    }
}

// SAFETY: every method forwards to `MiMalloc` with the caller's arguments unchanged, so its
// guarantees are this allocator's; the counting touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe { MiMalloc.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe { MiMalloc.alloc_zeroed(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: forwarded as received (see the impl).
        unsafe { MiMalloc.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe { MiMalloc.realloc(ptr, layout, new_size) }
    }
}

/// Turns counting on. Bytes freed afterwards that were allocated before count negatively, so
/// only differences between two [`heap_in_use`] readings mean anything.
pub fn start_counting() {
    COUNTING.store(true, Ordering::Relaxed);
}

/// Bytes allocated minus bytes freed since counting started.
pub fn heap_in_use() -> isize {
    IN_USE.load(Ordering::Relaxed)
}

/// Turns counting on and keeps [`heap_peak`] too (one more atomic per allocation, so only
/// for runs that report it, not timed ones).
pub fn start_counting_with_peak() {
    TRACKING_PEAK.store(true, Ordering::Relaxed);
    start_counting();
}

/// The highest [`heap_in_use`] reached since [`start_counting_with_peak`].
pub fn heap_peak() -> isize {
    PEAK.load(Ordering::Relaxed)
}
