//! The threads handlers run on: one pool for the whole process, shared by every informer.
//!
//! A listener with notifications waiting submits one job — "deliver until my buffer is empty" —
//! and the job runs on an idle pool thread or, when every thread is busy, on a new one. So a
//! handler that blocks keeps only its own thread and never delays another handler (the isolation
//! a thread per handler gave), while idle handlers own no thread at all: a process with a
//! hundred informers of three handlers each runs as many delivery threads as handlers are busy
//! at once, not three hundred. Threads idle for [`KEEP_ALIVE`] exit.
//!
//! It is a plain OS-thread pool rather than tokio's blocking pool, on purpose: handlers are
//! synchronous code that may block, delivery must not depend on which runtime (if any) the
//! caller of `add_event_handler` is on, a paused tokio clock must not wait for a stuck handler,
//! and dropping a runtime must not wait for one either.

use std::collections::VecDeque;
use std::sync::{Arc, OnceLock};
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
        let mut st = self.state.lock();
        st.queue.push_back(job);
        if st.idle > 0 {
            st.idle -= 1;
            st.notified += 1;
            self.work.notify_one();
            return;
        }
        st.threads += 1;
        drop(st);
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
