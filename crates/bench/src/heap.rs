//! The bench binary's global allocator, counting heap bytes in use (how `podsync` measures
//! what a cache retains per object: exact live bytes, where RSS would also count allocator slack
//! and freed pages not yet returned to the OS), over one of two allocators chosen per process
//! ([`Allocator`], `kcache-bench --allocator`):
//! - mimalloc for the throughput scenarios, as a busy controller binary would pick: glibc's
//!   malloc is slow to free objects on a thread other than the one that allocated them, which is
//!   what a FIFO consumer does;
//! - the system allocator (glibc malloc, what a Rust binary uses unless it picks one) for the
//!   memory scenarios (`informer`, `many`): with kcache's compact caches it keeps 3–6 MB less
//!   RSS than mimalloc at 10k objects (docs/benchmarks.md), and kube-rs's krbench runs on it too.
//!   At a million pods it is the other way round (mimalloc 0.5 GB less): pass `--allocator mimalloc`.
//!
//! The choice is read from `KCACHE_BENCH_ALLOCATOR` at the process's first allocation and never
//! changes, so every block is freed by the allocator that made it; `main` re-executes the binary
//! with the variable set when a scenario wants the other one ([`Allocator::current`]).
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

use std::alloc::System;
use std::cell::Cell;
use std::ffi::CStr;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU8, AtomicUsize, Ordering};

use mimalloc::MiMalloc;

static COUNTING: AtomicBool = AtomicBool::new(false);
/// The running total, kept only while the peak is tracked (a peak needs one sum).
static IN_USE: AtomicIsize = AtomicIsize::new(0);
static PEAK: AtomicIsize = AtomicIsize::new(0);
static TRACKING_PEAK: AtomicBool = AtomicBool::new(false);

/// Per-thread counts, each on its own cache line: one counter shared by every thread is a
/// contended atomic add on each allocation and free, which slowed the scenarios it measured
/// (the decode threads of a sync allocate on every core at once). The first `SHARDS - 1`
/// threads own a shard each and write it with a plain load and store (nobody else writes it);
/// later threads share the last one with atomic adds.
const SHARDS: usize = 64;

#[repr(align(128))]
struct Shard(AtomicIsize);

static SHARD_COUNTS: [Shard; SHARDS] = [const { Shard(AtomicIsize::new(0)) }; SHARDS];
static NEXT_SHARD: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// This thread's shard (`usize::MAX`: not yet taken). Const-initialized without a
    /// destructor, so reading it allocates nothing and works during thread exit.
    static SHARD: Cell<usize> = const { Cell::new(usize::MAX) };
}

/// Adds `delta` to this thread's shard.
fn count_in_shard(delta: isize) {
    let index = SHARD
        .try_with(|shard| {
            if shard.get() == usize::MAX {
                shard.set(NEXT_SHARD.fetch_add(1, Ordering::Relaxed).min(SHARDS - 1));
            }
            shard.get()
        })
        .unwrap_or(SHARDS - 1);
    let counter = &SHARD_COUNTS[index].0;
    if index < SHARDS - 1 {
        counter.store(counter.load(Ordering::Relaxed) + delta, Ordering::Relaxed);
    } else {
        counter.fetch_add(delta, Ordering::Relaxed);
    }
}

/// The environment variable that picks the allocator (`system` or `mimalloc`).
pub const ALLOCATOR_ENV: &str = "KCACHE_BENCH_ALLOCATOR";
const ALLOCATOR_ENV_C: &CStr = c"KCACHE_BENCH_ALLOCATOR";
const UNDECIDED: u8 = 0;
const MIMALLOC: u8 = 1;
const SYSTEM: u8 = 2;
static CHOICE: AtomicU8 = AtomicU8::new(UNDECIDED);

/// The allocators the bench can run on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Allocator {
    /// mimalloc.
    Mimalloc,
    /// The system allocator (glibc malloc).
    System,
}

impl Allocator {
    /// The allocator serving this process.
    pub fn current() -> Allocator {
        if use_system() {
            Allocator::System
        } else {
            Allocator::Mimalloc
        }
    }

    /// Its name, as `--allocator` and [`ALLOCATOR_ENV`] spell it.
    pub fn name(self) -> &'static str {
        match self {
            Allocator::Mimalloc => "mimalloc",
            Allocator::System => "system",
        }
    }
}

/// Whether the system allocator serves this process; decided at the first call (the process's
/// first allocation, before any other thread exists) from [`ALLOCATOR_ENV`].
fn use_system() -> bool {
    match CHOICE.load(Ordering::Relaxed) {
        MIMALLOC => false,
        SYSTEM => true,
        _ => {
            // SAFETY: getenv with a NUL-terminated name; the pointer it returns, if not null, is
            // a NUL-terminated string that lives while the environment is not modified, and it
            // is read at once. Neither call allocates.
            let system = unsafe {
                let value = libc::getenv(ALLOCATOR_ENV_C.as_ptr());
                !value.is_null() && CStr::from_ptr(value) == c"system"
            };
            CHOICE.store(if system { SYSTEM } else { MIMALLOC }, Ordering::Relaxed);
            system
        }
    }
}

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
const MI_OPTION_ARENA_EAGER_COMMIT: libmimalloc_sys::mi_option_t = 4;
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Has mimalloc hand freed pages back to the OS at once (`purge_delay` 0; its default waits
/// 10 ms, and 10× that in arenas) and commit arena memory as it is used (`arena_eager_commit` 0)
/// — what `MIMALLOC_PURGE_DELAY=0 MIMALLOC_ARENA_EAGER_COMMIT=0` do, set from inside the binary.
/// For the informer scenario, where peak RSS is the figure: a list's transient buffers are
/// freed between the pages of decoded objects, and a freed page kept for later is RSS
/// (10k ConfigMaps on kube-apiserver: 84.6 → 75.0 MB, see docs/benchmarks.md), for a run of a
/// memory scenario on mimalloc. The throughput scenarios keep mimalloc's defaults.
pub fn release_freed_memory_promptly() {
    if use_system() {
        return;
    }
    // SAFETY: `mi_option_set` takes plain integers; mimalloc reads options on every use, so
    // changing them while it runs is what the function is for.
    unsafe {
        libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, 0);
        libmimalloc_sys::mi_option_set(MI_OPTION_ARENA_EAGER_COMMIT, 0);
    }
}

/// The chosen allocator, counting allocated-minus-freed bytes while counting is on.
struct Counting;

#[global_allocator]
static GLOBAL: Counting = Counting;

fn count(delta: isize) {
    if !COUNTING.load(Ordering::Relaxed) {
        return;
    }
    if TRACKING_PEAK.load(Ordering::Relaxed) {
        let now = IN_USE.fetch_add(delta, Ordering::Relaxed) + delta;
        if delta > 0 {
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
    } else {
        count_in_shard(delta);
    }
}

// SAFETY: every method forwards to the one allocator chosen for the whole process (`use_system`
// never changes its answer) with the caller's arguments unchanged, so its guarantees are this
// allocator's; the counting touches only atomics.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            if use_system() {
                System.alloc(layout)
            } else {
                MiMalloc.alloc(layout)
            }
        }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            if use_system() {
                System.alloc_zeroed(layout)
            } else {
                MiMalloc.alloc_zeroed(layout)
            }
        }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        count(-(layout.size() as isize));
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            if use_system() {
                System.dealloc(ptr, layout)
            } else {
                MiMalloc.dealloc(ptr, layout)
            }
        }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size as isize - layout.size() as isize);
        // SAFETY: forwarded as received (see the impl).
        unsafe {
            if use_system() {
                System.realloc(ptr, layout, new_size)
            } else {
                MiMalloc.realloc(ptr, layout, new_size)
            }
        }
    }
}

/// Turns counting on. Bytes freed afterwards that were allocated before count negatively, so
/// only differences between two [`heap_in_use`] readings mean anything.
pub fn start_counting() {
    COUNTING.store(true, Ordering::Relaxed);
}

/// Turns counting off, for a timed loop after the last [`heap_in_use`] reading: the counter's
/// atomic add on every allocation and free is the bench's cost, not the code's under test.
pub fn stop_counting() {
    COUNTING.store(false, Ordering::Relaxed);
}

/// Bytes allocated minus bytes freed since counting started.
pub fn heap_in_use() -> isize {
    if TRACKING_PEAK.load(Ordering::Relaxed) {
        return IN_USE.load(Ordering::Relaxed);
    }
    SHARD_COUNTS
        .iter()
        .map(|s| s.0.load(Ordering::Relaxed))
        .sum()
}

/// Turns counting on and keeps [`heap_peak`] too (one shared running total, a contended atomic
/// add per allocation, so only for runs that report it, not timed ones).
pub fn start_counting_with_peak() {
    TRACKING_PEAK.store(true, Ordering::Relaxed);
    start_counting();
}

/// The highest [`heap_in_use`] reached since [`start_counting_with_peak`].
pub fn heap_peak() -> isize {
    PEAK.load(Ordering::Relaxed)
}

/// Replaces this process with the same command on `allocator` (the allocator is chosen at a
/// process's first allocation, see the module docs); returns only on failure, by exiting.
pub fn run_on(allocator: Allocator) -> ! {
    use std::os::unix::process::CommandExt;
    let err = std::env::current_exe()
        .map(|exe| {
            std::process::Command::new(exe)
                .args(std::env::args_os().skip(1))
                .env(ALLOCATOR_ENV, allocator.name())
                .exec()
        })
        .unwrap_or_else(|e| e);
    eprintln!(
        "kcache-bench: cannot re-run on the {} allocator: {err}",
        allocator.name()
    );
    std::process::exit(2);
}
