//! client-go's parallelizer_test.go, plus cancellation and panic reporting.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use kcache_workqueue::parallelize_until;

#[test]
fn every_piece_runs_once_for_any_chunking() {
    for (workers, pieces, chunk) in [
        (1, 1000, 1),
        (10, 1000, 1),
        (10, 1000, 7),
        (10, 1000, 1000),
        (10, 1000, 2000),
        (3, 0, 1),
        (100, 3, 1),
        (4, 100, 0),
    ] {
        let seen: Vec<AtomicUsize> = (0..pieces).map(|_| AtomicUsize::new(0)).collect();
        parallelize_until(
            workers,
            pieces,
            |p| {
                seen[p].fetch_add(1, Ordering::Relaxed);
            },
            chunk,
            None,
        )
        .unwrap();
        assert!(
            seen.iter().all(|s| s.load(Ordering::Relaxed) == 1),
            "{workers} workers, {pieces} pieces, chunk {chunk}"
        );
    }
}

#[test]
fn uses_at_most_min_of_workers_and_chunks_threads() {
    let active = AtomicUsize::new(0);
    let peak = AtomicUsize::new(0);
    let barrier_free = |_| {
        let now = active.fetch_add(1, Ordering::SeqCst) + 1;
        peak.fetch_max(now, Ordering::SeqCst);
        std::thread::yield_now();
        active.fetch_sub(1, Ordering::SeqCst);
    };
    // 10 pieces in chunks of 5: 2 chunks, so at most 2 threads although 8 were allowed
    parallelize_until(8, 10, barrier_free, 5, None).unwrap();
    assert!(peak.load(Ordering::SeqCst) <= 2);
}

#[test]
fn stops_taking_pieces_once_cancelled() {
    let cancelled = AtomicBool::new(false);
    let ran = AtomicUsize::new(0);
    let ran_when_cancelled = AtomicUsize::new(0);
    parallelize_until(
        2,
        10_000,
        |_| {
            if ran.fetch_add(1, Ordering::SeqCst) + 1 == 10 {
                cancelled.store(true, Ordering::SeqCst);
                ran_when_cancelled.store(ran.load(Ordering::SeqCst), Ordering::SeqCst);
            }
        },
        1,
        Some(&cancelled),
    )
    .unwrap();
    // The other worker may have checked the flag just before it was set and started one more
    // piece; nothing starts after that. (Counted from the moment the flag was set, not from the
    // 10th piece: the thread setting it may be preempted while the other one runs on.)
    let (ran, at_cancel) = (
        ran.load(Ordering::SeqCst),
        ran_when_cancelled.load(Ordering::SeqCst),
    );
    assert!(
        at_cancel >= 10 && ran <= at_cancel + 1,
        "ran {ran}, {at_cancel} when cancelled"
    );

    let ran = AtomicUsize::new(0);
    parallelize_until(
        4,
        100,
        |_| {
            ran.fetch_add(1, Ordering::SeqCst);
        },
        1,
        Some(&cancelled),
    )
    .unwrap();
    assert_eq!(
        ran.load(Ordering::SeqCst),
        0,
        "already cancelled: nothing runs"
    );
}

#[test]
fn a_panicking_piece_is_reported_and_the_others_still_run() {
    let ran = AtomicUsize::new(0);
    let err = parallelize_until(
        3,
        100,
        |p| {
            if p == 17 || p == 60 {
                panic!("piece {p} failed");
            }
            ran.fetch_add(1, Ordering::Relaxed);
        },
        4,
        None,
    )
    .unwrap_err();
    assert_eq!(ran.load(Ordering::Relaxed), 98);
    let mut pieces: Vec<_> = err.panics.iter().map(|p| p.piece).collect();
    pieces.sort_unstable();
    assert_eq!(pieces, [17, 60]);
    assert!(err.panics.iter().any(|p| p.message == "piece 17 failed"));
    assert!(err.to_string().contains("2 piece(s) panicked"));
}
