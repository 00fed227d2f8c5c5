//! The threads handlers run on: one pool for the whole process, shared by every informer.
//!
//! A listener with notifications waiting submits one job — "deliver until my buffer is empty" —
//! and the job runs on an idle pool thread or, when every thread is busy, on a new one. So a
//! handler that blocks keeps only its own thread and never delays another handler (the isolation
//! a thread per handler gave), while idle handlers own no thread at all: a process with a
//! hundred informers of three handlers each runs as many delivery threads as handlers are busy
//! at once, not three hundred. Threads idle for [`KEEP_ALIVE`] exit.
//!
//! A job whose handler has caught up lingers a few milliseconds for more (see the listener's
//! `LINGER`) and is not idle, but not busy either: when a job comes and no thread is idle, the
//! oldest lingering job is released and its thread takes the job, so a burst of many short
//! deliveries (three hundred handlers' initial adds) reuses a few threads instead of starting
//! one per handler, each to exit later. A handler running or blocked is never released.
//!
//! It is a plain OS-thread pool rather than tokio's blocking pool, on purpose: handlers are
//! synchronous code that may block, delivery must not depend on which runtime (if any) the
//! caller of `add_event_handler` is on, a paused tokio clock must not wait for a stuck handler,
//! and dropping a runtime must not wait for one either.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};

/// How long an idle delivery thread waits for work before it exits.
pub(crate) const KEEP_ALIVE: Duration = Duration::from_secs(5);

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    /// Threads waiting for work and not yet told to take any.
    idle: usize,
    /// Wake-ups sent to idle threads and not yet taken.
    notified: usize,
    threads: usize,
}

#[derive(Default)]
pub(crate) struct DeliveryPool {
    state: Mutex<State>,
    work: Condvar,
    /// Listeners whose delivery jobs linger, or did when they were listed, oldest first:
    /// each is listed once at most (it stays listed across lingers until a `spawn` takes it),
    /// so a busy handler lingering between every batch of events costs no list operation.
    lingering: Mutex<VecDeque<Weak<dyn Lingering>>>,
}

/// A listener whose delivery job may be lingering, which the pool can release.
pub(crate) trait Lingering: Send + Sync {
    /// Takes the listener off the pool's list; if its job is lingering, wakes it to hand its
    /// thread back and returns true.
    fn release(&self) -> bool;
}

impl DeliveryPool {
    /// The process's pool.
    pub(crate) fn global() -> &'static Arc<DeliveryPool> {
        static POOL: OnceLock<Arc<DeliveryPool>> = OnceLock::new();
        POOL.get_or_init(Arc::default)
    }

    /// Runs `job` on an idle thread, or on a new one if none is idle. If no thread can be
    /// started (the OS refused), the job waits for the next thread that frees up.
    pub(crate) fn spawn(self: &Arc<Self>, job: Job) {
        {
            let mut st = self.state.lock();
            st.queue.push_back(job);
            if st.idle > 0 {
                st.idle -= 1;
                st.notified += 1;
                self.work.notify_one();
                return;
            }
        }
        // Each taken off the list before it is asked, with no lock held meanwhile (releasing
        // takes the listener's lock, under which it joins this list).
        loop {
            let listed = self.lingering.lock().pop_front();
            let Some(listed) = listed else {
                break;
            };
            if listed.upgrade().is_some_and(|l| l.release()) {
                return;
            }
        }
        self.state.lock().threads += 1;
        let me = self.clone();
        let spawned = std::thread::Builder::new()
            .name("kcache-delivery".into())
            .spawn(move || me.work_loop());
        if let Err(e) = spawned {
            self.state.lock().threads -= 1;
            tracing::error!(
                "cannot start a handler delivery thread: {e}; the job waits for a free one"
            );
        }
    }

    /// Lists a listener whose job lingers (once: see [`DeliveryPool::lingering`]). Entries of
    /// removed listeners are dropped whenever the list reaches a power of two, so it holds
    /// about twice the live listeners at most, however many come and go.
    pub(crate) fn linger_start(&self, listener: Weak<dyn Lingering>) {
        let mut listed = self.lingering.lock();
        if listed.len() >= 64 && listed.len().is_power_of_two() {
            listed.retain(|l| l.strong_count() > 0);
        }
        listed.push_back(listener);
    }

    /// Threads alive now (running a job or idle).
    #[cfg(test)]
    pub(crate) fn threads(&self) -> usize {
        self.state.lock().threads
    }

    fn work_loop(&self) {
        let mut st = self.state.lock();
        loop {
            while let Some(job) = st.queue.pop_front() {
                drop(st);
                job();
                st = self.state.lock();
            }
            st.idle += 1;
            let timed_out = self.work.wait_for(&mut st, KEEP_ALIVE).timed_out();
            if st.notified > 0 {
                // Woken on purpose: `spawn` already took this thread off the idle count.
                st.notified -= 1;
                continue;
            }
            st.idle -= 1;
            if timed_out && st.queue.is_empty() {
                st.threads -= 1;
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::mpsc;

    #[test]
    fn a_blocked_job_does_not_delay_the_next() {
        let pool = Arc::new(DeliveryPool::default());
        let (release_tx, release_rx) = mpsc::channel::<()>();
        let (done_tx, done_rx) = mpsc::channel();
        pool.spawn(Box::new(move || {
            let _ = release_rx.recv();
        }));
        let done = done_tx.clone();
        pool.spawn(Box::new(move || done.send(1).unwrap()));
        assert_eq!(done_rx.recv_timeout(Duration::from_secs(10)), Ok(1));
        assert_eq!(pool.threads(), 2, "the second job got a thread of its own");
        release_tx.send(()).unwrap();
    }

    /// A job lingering as a listener's does: it waits on its own condition variable until
    /// released (or the wait ends), and reports whether it was released.
    #[derive(Default)]
    struct Linger {
        state: Mutex<(bool, bool)>,
        wake: Condvar,
    }

    impl Lingering for Linger {
        fn release(&self) -> bool {
            let mut st = self.state.lock();
            let (lingering, released) = &mut *st;
            if *lingering {
                *released = true;
                self.wake.notify_one();
            }
            *lingering
        }
    }

    impl Linger {
        fn linger(self: &Arc<Self>, pool: &DeliveryPool, wait: Duration) -> bool {
            let mut st = self.state.lock();
            st.0 = true;
            pool.linger_start(Arc::downgrade(self) as Weak<dyn Lingering>);
            if !st.1 {
                self.wake.wait_for(&mut st, wait);
            }
            st.0 = false;
            std::mem::take(&mut st.1)
        }
    }

    #[test]
    fn a_new_job_takes_a_lingering_jobs_thread_and_a_busy_one_is_never_released() {
        let pool = Arc::new(DeliveryPool::default());
        // Listed before, not lingering now: skipped.
        let stale = Arc::new(Linger::default());
        pool.linger_start(Arc::downgrade(&stale) as Weak<dyn Lingering>);
        let linger = Arc::new(Linger::default());
        let (tx, rx) = mpsc::channel();
        let (p, l, lingering) = (pool.clone(), linger.clone(), tx.clone());
        pool.spawn(Box::new(move || {
            let released = l.linger(&p, Duration::from_secs(30));
            lingering.send(("released", released)).unwrap()
        }));
        while !linger.state.lock().0 {
            std::thread::yield_now();
        }
        pool.spawn(Box::new(move || tx.send(("next", true)).unwrap()));
        let got: Vec<_> = (0..2)
            .map(|_| rx.recv_timeout(Duration::from_secs(10)).unwrap())
            .collect();
        assert_eq!(got, [("released", true), ("next", true)]);
        assert_eq!(
            pool.threads(),
            1,
            "the lingering job's thread ran the next job"
        );
        assert!(pool.lingering.lock().is_empty());

        // A job that is running (not lingering) keeps its thread: the next one gets a new one.
        while pool.state.lock().idle == 0 {
            std::thread::yield_now();
        }
        let (release_tx, release_rx) = mpsc::channel::<()>();
        pool.spawn(Box::new(move || {
            let _ = release_rx.recv();
        }));
        let (done_tx, done_rx) = mpsc::channel();
        pool.spawn(Box::new(move || done_tx.send(()).unwrap()));
        assert!(done_rx.recv_timeout(Duration::from_secs(10)).is_ok());
        assert_eq!(pool.threads(), 2);
        release_tx.send(()).unwrap();
    }

    #[test]
    fn removed_listeners_leave_the_list() {
        let pool = DeliveryPool::default();
        let live = Arc::new(Linger::default());
        pool.linger_start(Arc::downgrade(&live) as Weak<dyn Lingering>);
        for _ in 0..10_000 {
            let gone = Arc::new(Linger::default());
            pool.linger_start(Arc::downgrade(&gone) as Weak<dyn Lingering>);
        }
        let listed = pool.lingering.lock().len();
        assert!(listed <= 128, "{listed} entries for one live listener");
    }

    #[test]
    fn idle_threads_are_reused() {
        let pool = Arc::new(DeliveryPool::default());
        let (tx, rx) = mpsc::channel();
        for i in 0..50 {
            let tx = tx.clone();
            pool.spawn(Box::new(move || tx.send(i).unwrap()));
            assert_eq!(rx.recv_timeout(Duration::from_secs(10)), Ok(i));
            // Wait until the thread is idle again before the next job.
            while pool.state.lock().idle == 0 {
                std::thread::yield_now();
            }
        }
        assert_eq!(pool.threads(), 1, "sequential jobs ran on one thread");
    }
}
