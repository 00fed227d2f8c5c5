//! Scheduling rules on paused tokio time, over an in-memory informer (controller-runtime's
//! `controller_test.go`, kube-runtime's `controller` and `scheduler` tests): requeue_after
//! timing, earliest time wins, per-key backoff that resets on success, panics, terminal errors,
//! timeouts, gone objects and shutdown.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_controller::{
    Action, Controller, ControllerError, DefaultErrorPolicy, ErrorPolicy, ReconcileRequest,
    Runnable, TerminalError,
};
use kcache_workqueue::ItemExponentialFailureRateLimiter;
use tokio::sync::Notify;
use tokio::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::support::{cm, with_data, CountingMetrics, Fake, Recorder, TestError};

type Ctx = Recorder;

fn spawn_run<F, Fut>(
    controller: Controller<ConfigMap>,
    ctx: Arc<Ctx>,
    reconcile: F,
) -> (
    CancellationToken,
    tokio::task::JoinHandle<Result<(), ControllerError>>,
)
where
    F: Fn(Arc<ConfigMap>, Arc<Ctx>) -> Fut + Send + Sync + 'static,
    Fut: std::future::Future<Output = Result<Action, TestError>> + Send + 'static,
{
    let stop = CancellationToken::new();
    let c = controller.shutdown_on(stop.clone());
    let task = tokio::spawn(c.run(reconcile, DefaultErrorPolicy, ctx));
    (stop, task)
}

/// A stream trigger fed by a channel: a tokio task, so paused time cannot run ahead of it as it
/// can of the informer's delivery threads.
fn channel_trigger() -> (
    tokio::sync::mpsc::UnboundedSender<ReconcileRequest>,
    impl futures_util::Stream<Item = ReconcileRequest>,
) {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<ReconcileRequest>();
    let stream =
        futures_util::stream::unfold(rx, |mut rx| async move { rx.recv().await.map(|r| (r, rx)) });
    (tx, stream)
}

#[tokio::test(start_paused = true)]
async fn requeue_after_reconciles_again_after_the_delay() {
    let fake = Fake::new("requeue-after", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let c = Controller::for_informer(fake.cache()).named("requeue-after");
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        Ok(Action::requeue_after(Duration::from_secs(10)))
    });
    ctx.wait_until("three reconciles", |c| c.len() >= 3).await;
    let t = ctx.times("a");
    assert_eq!(t[1] - t[0], Duration::from_secs(10));
    assert_eq!(t[2] - t[1], Duration::from_secs(10));
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn pending_requests_collapse_and_the_earliest_time_wins() {
    // First reconcile asks for 60 s; a change reconciles at once and asks for 5 s: the key then
    // waits once, for 5 s, and the 60 s request is gone (kube-runtime's scheduler rule).
    let fake = Fake::new("earliest", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let (tx, trigger) = channel_trigger();
    let c = Controller::for_informer(fake.cache())
        .named("earliest")
        .watches_stream(trigger);
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        let n = ctx.count("a");
        Ok(match n {
            1 => Action::requeue_after(Duration::from_secs(60)),
            2 => Action::requeue_after(Duration::from_secs(5)),
            _ => Action::await_change(),
        })
    });
    ctx.wait_until("the first reconcile", |c| c.len() == 1)
        .await;
    let start = Instant::now();
    tx.send(ReconcileRequest::new("ns", "a")).unwrap();
    ctx.wait_until("the reconcile of the change", |c| c.len() == 2)
        .await;
    ctx.wait_until("the 5 s requeue", |c| c.len() == 3).await;
    tokio::time::sleep(Duration::from_secs(120)).await;
    let t = ctx.times("a");
    assert_eq!(t.len(), 3, "the 60 s request collapsed into the 5 s one");
    assert_eq!(t[2] - t[1], Duration::from_secs(5));
    assert!(t[1] - start < Duration::from_secs(1));
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// Records successes and errors; retries with the rate limiter.
struct Watching {
    successes: AtomicUsize,
    errors: AtomicUsize,
}

impl ErrorPolicy<ConfigMap, TestError, Ctx> for Arc<Watching> {
    fn on_error(&self, _: Arc<ConfigMap>, _: &TestError, _: Arc<Ctx>) -> Action {
        self.errors.fetch_add(1, Ordering::Relaxed);
        Action::requeue()
    }
    fn on_success(&self, _: &Arc<ConfigMap>, _: &Arc<Ctx>) {
        self.successes.fetch_add(1, Ordering::Relaxed);
    }
}

#[tokio::test(start_paused = true)]
async fn backoff_is_per_key_and_resets_on_success() {
    // a fails, fails, succeeds (requeue_after 1 s), fails: its delays are 1 s, 2 s, then 1 s
    // again after the success; b, failing alongside, has its own count.
    let fake = Fake::new("backoff", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let policy = Arc::new(Watching {
        successes: AtomicUsize::new(0),
        errors: AtomicUsize::new(0),
    });
    let limiter =
        ItemExponentialFailureRateLimiter::new(Duration::from_secs(1), Duration::from_secs(100));
    let stop = CancellationToken::new();
    let c = Controller::for_informer(fake.cache())
        .named("backoff")
        .rate_limiter(limiter)
        .shutdown_on(stop.clone());
    let task = tokio::spawn(c.run(
        |cm, ctx: Arc<Ctx>| async move {
            ctx.record(&cm);
            match ctx.count("a") {
                1 | 2 | 4 => Err(TestError::Retry),
                3 => Ok(Action::requeue_after(Duration::from_secs(1))),
                _ => Ok(Action::await_change()),
            }
        },
        policy.clone(),
        ctx.clone(),
    ));
    ctx.wait_until("five reconciles", |c| c.len() == 5).await;
    let t = ctx.times("a");
    let gaps: Vec<Duration> = t.windows(2).map(|w| w[1] - w[0]).collect();
    let s = Duration::from_secs;
    assert_eq!(gaps, vec![s(1), s(2), s(1), s(1)]);
    assert_eq!(policy.successes.load(Ordering::Relaxed), 2);
    assert_eq!(policy.errors.load(Ordering::Relaxed), 3);
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_panic_is_caught_counted_and_retried_with_backoff() {
    let fake = Fake::new("panics", [cm("ns", "a"), cm("ns", "b")]);
    let ctx = Arc::new(Recorder::default());
    let metrics = Arc::new(CountingMetrics::default());
    let c = Controller::for_informer(fake.cache())
        .named("panics")
        .metrics_provider(metrics.clone());
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        if cm.metadata.name.as_deref() == Some("a") && ctx.count("a") <= 2 {
            panic!("reconcile of a panics");
        }
        Ok(Action::await_change())
    });
    ctx.wait_until("a reconciled after two panics", |c| {
        c.iter().filter(|c| c.0 == "a").count() == 3
    })
    .await;
    let t = ctx.times("a");
    assert_eq!(t[1] - t[0], Duration::from_millis(5), "client-go's 5 ms");
    assert_eq!(t[2] - t[1], Duration::from_millis(10), "then doubled");
    assert_eq!(ctx.count("b"), 1, "the other key is unaffected");
    assert_eq!(metrics.value("reconcile_panics"), 2);
    assert_eq!(metrics.value("reconcile_errors"), 2);
    assert_eq!(metrics.value("reconcile_total/success"), 2);
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_terminal_error_is_not_retried_until_the_object_changes() {
    let fake = Fake::new("terminal", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let metrics = Arc::new(CountingMetrics::default());
    let c = Controller::for_informer(fake.cache())
        .named("terminal")
        .metrics_provider(metrics.clone());
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        Err(TestError::Bad(TerminalError::new("never valid")))
    });
    ctx.wait_until("the first reconcile", |c| c.len() == 1)
        .await;
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(ctx.count("a"), 1, "not retried");
    assert_eq!(metrics.value("terminal_reconcile_errors"), 1);
    fake.source.modify(with_data(cm("ns", "a"), "v2"));
    ctx.wait_until("the change reconciled", |c| c.len() == 2)
        .await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_reconcile_over_its_timeout_is_cancelled_and_retried() {
    let fake = Fake::new("timeout", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let metrics = Arc::new(CountingMetrics::default());
    let c = Controller::for_informer(fake.cache())
        .named("timeout")
        .reconcile_timeout(Duration::from_secs(2))
        .metrics_provider(metrics.clone());
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        if ctx.count("a") == 1 {
            tokio::time::sleep(Duration::from_secs(3600)).await;
        }
        Ok(Action::await_change())
    });
    ctx.wait_until("the retry", |c| c.len() == 2).await;
    let t = ctx.times("a");
    assert_eq!(
        t[1] - t[0],
        Duration::from_secs(2) + Duration::from_millis(5)
    );
    assert_eq!(metrics.value("reconcile_timeouts"), 1);
    stop.cancel();
    task.await.unwrap().unwrap();
}

/// Deletes `a` once it was reconciled, and checks that `gone` heard it with its last state.
async fn a_deletion_reaches_gone(fake: &Fake, ctx: &Recorder, gone: &Recorder) {
    ctx.wait_until("the first reconcile", |c| c.len() == 1)
        .await;
    fake.source.delete(with_data(cm("ns", "a"), "last"));
    gone.wait_until("the gone reconcile", |c| c.len() == 1)
        .await;
    let calls = gone.calls.lock().clone();
    assert_eq!((calls[0].0.as_str(), calls[0].1.as_str()), ("a", "last"));
}

#[tokio::test(start_paused = true)]
async fn a_deleted_object_is_reconciled_as_gone_with_its_last_state() {
    let fake = Fake::new("gone", [with_data(cm("ns", "a"), "last")]);
    let ctx = Arc::new(Recorder::default());
    let gone = Arc::new(Recorder::default());
    let stop = CancellationToken::new();
    let c = Controller::for_informer(fake.cache())
        .named("gone")
        .shutdown_on(stop.clone());
    let g = gone.clone();
    let task = tokio::spawn(c.run_with_gone(
        |cm, ctx: Arc<Ctx>| async move {
            ctx.record(&cm);
            Ok::<_, TestError>(Action::await_change())
        },
        move |last, _| {
            let g = g.clone();
            async move {
                g.record(&last);
                Ok(Action::await_change())
            }
        },
        DefaultErrorPolicy,
        ctx.clone(),
    ));
    a_deletion_reaches_gone(&fake, &ctx, &gone).await;
    assert_eq!(ctx.count("a"), 1);
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_runnable_reconciles_a_deleted_object_as_gone() {
    let fake = Fake::new("gone-runnable", [with_data(cm("ns", "a"), "last")]);
    let ctx = Arc::new(Recorder::default());
    let gone = Arc::new(Recorder::default());
    let g = gone.clone();
    let runnable = Controller::for_informer(fake.cache())
        .named("gone-runnable")
        .into_runnable_with_gone(
            |cm, ctx: Arc<Ctx>| async move {
                ctx.record(&cm);
                Ok::<_, TestError>(Action::await_change())
            },
            move |last, _| {
                let g = g.clone();
                async move {
                    g.record(&last);
                    Ok(Action::await_change())
                }
            },
            DefaultErrorPolicy,
            ctx.clone(),
        );
    let stop = CancellationToken::new();
    let task = tokio::spawn(Box::new(runnable).start(stop.clone()));
    a_deletion_reaches_gone(&fake, &ctx, &gone).await;
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn shutdown_lets_reconciles_in_flight_finish_and_takes_no_new_key() {
    let fake = Fake::new("shutdown", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let release = Arc::new(Notify::new());
    let r = release.clone();
    let (stop, task) = spawn_run(
        Controller::for_informer(fake.cache()).named("shutdown"),
        ctx.clone(),
        move |cm, ctx: Arc<Ctx>| {
            let r = r.clone();
            async move {
                ctx.record(&cm);
                r.notified().await;
                ctx.record(&with_data((*cm).clone(), "finished"));
                Ok(Action::await_change())
            }
        },
    );
    ctx.wait_until("a in flight", |c| c.len() == 1).await;
    fake.source.add(cm("ns", "b"));
    stop.cancel();
    tokio::time::sleep(Duration::from_secs(1)).await;
    assert!(!task.is_finished(), "waits for the reconcile in flight");
    release.notify_one();
    task.await.unwrap().unwrap();
    let calls = ctx.calls.lock().clone();
    assert_eq!(calls.len(), 2, "a finished, b never started: {calls:?}");
    assert_eq!(calls[1].1, "finished");
}

#[tokio::test(start_paused = true)]
async fn shutdown_gives_up_on_a_stuck_reconcile_at_its_timeout() {
    let fake = Fake::new("stuck", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let stop = CancellationToken::new();
    let c = Controller::for_informer(fake.cache())
        .named("stuck")
        .shutdown_timeout(Duration::from_secs(5))
        .shutdown_on(stop.clone());
    let task = tokio::spawn(c.run(
        |cm, ctx: Arc<Ctx>| async move {
            ctx.record(&cm);
            std::future::pending::<()>().await;
            Ok::<_, TestError>(Action::await_change())
        },
        DefaultErrorPolicy,
        ctx.clone(),
    ));
    ctx.wait_until("a in flight", |c| c.len() == 1).await;
    let start = Instant::now();
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(start.elapsed(), Duration::from_secs(5));
}

#[tokio::test(start_paused = true)]
async fn each_object_of_the_first_list_is_reconciled_once_and_debounce_collapses_changes() {
    let names: Vec<String> = (0..20).map(|i| format!("cm-{i}")).collect();
    let fake = Fake::new("first-list", names.iter().map(|n| cm("ns", n)));
    let ctx = Arc::new(Recorder::default());
    let (tx, trigger) = channel_trigger();
    let c = Controller::for_informer(fake.cache())
        .named("first-list")
        .watches_stream(trigger)
        .concurrency(3)
        .debounce(Duration::from_secs(1));
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        Ok(Action::await_change())
    });
    ctx.wait_until("the first list", |c| c.len() == 20).await;
    let mut seen = ctx.names();
    seen.sort();
    let mut want = names.clone();
    want.sort();
    assert_eq!(seen, want, "each once");
    for _ in 0..3 {
        tx.send(ReconcileRequest::new("ns", "cm-0")).unwrap();
    }
    ctx.wait_until("the changes", |c| c.len() == 21).await;
    tokio::time::sleep(Duration::from_secs(10)).await;
    assert_eq!(
        ctx.count("cm-0"),
        2,
        "three changes within the window: one reconcile"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn debounce_waits_for_the_window_after_the_last_event() {
    let fake = Fake::new("trailing", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let (tx, trigger) = channel_trigger();
    let c = Controller::for_informer(fake.cache())
        .named("trailing")
        .watches_stream(trigger)
        .debounce(Duration::from_secs(1));
    let (stop, task) = spawn_run(c, ctx.clone(), |cm, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        Ok(Action::await_change())
    });
    ctx.wait_until("the first list", |c| c.len() == 1).await;
    let start = Instant::now();
    // Events at 0, 0.6 s and 1.2 s: each within the window of the one before.
    for _ in 0..3 {
        tx.send(ReconcileRequest::new("ns", "a")).unwrap();
        tokio::time::sleep(Duration::from_millis(600)).await;
    }
    // 1.8 s: the first event's window ended long ago, the last one's has not.
    assert_eq!(
        ctx.count("a"),
        1,
        "not yet: the burst's last event was 0.6 s ago"
    );
    ctx.wait_until("the burst", |c| c.len() == 2).await;
    assert_eq!(
        start.elapsed(),
        Duration::from_millis(2200),
        "one window after the last event"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn two_running_controllers_cannot_share_a_name() {
    let fake = Fake::new("dup", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let reconcile = |cm: Arc<ConfigMap>, ctx: Arc<Ctx>| async move {
        ctx.record(&cm);
        Ok(Action::await_change())
    };
    let (stop, task) = spawn_run(
        Controller::for_informer(fake.cache()).named("dup"),
        ctx.clone(),
        reconcile,
    );
    ctx.wait_until("the first one runs", |c| c.len() == 1).await;
    let second = Controller::for_informer(fake.cache())
        .named("dup")
        .run(reconcile, DefaultErrorPolicy, ctx.clone())
        .await;
    assert!(
        matches!(&second, Err(ControllerError::DuplicateName(n)) if n == "dup"),
        "{second:?}"
    );
    stop.cancel();
    task.await.unwrap().unwrap();
}

#[tokio::test(start_paused = true)]
async fn a_write_is_recorded_for_the_reconcile_running_on_its_task() {
    let fake = Fake::new("task-local-writes", [cm("ns", "a")]);
    let ctx = Arc::new(Recorder::default());
    let c = Controller::for_informer(fake.cache()).named("task-local-writes");
    let writes = c.writes();
    assert!(
        !kcache_controller::wrote(&cm("ns", "a")),
        "no reconcile runs on the test's task"
    );
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let s = seen.clone();
    let (stop, task) = spawn_run(c, ctx.clone(), move |cm, ctx: Arc<Ctx>| {
        let (writes, seen) = (writes.clone(), s.clone());
        async move {
            let key = ReconcileRequest::of(&*cm);
            let before = writes.is_pending(&key);
            let recorded = kcache_controller::wrote(&*cm);
            let pending = writes.is_pending(&key);
            let c = cm.clone();
            let spawned = tokio::spawn(async move { kcache_controller::wrote(&*c) });
            let on_spawned = spawned.await.unwrap();
            seen.lock().push((before, recorded, pending, on_spawned));
            ctx.record(&cm);
            Ok(Action::await_change())
        }
    });
    ctx.wait_until("one reconcile", |c| c.len() == 1).await;
    stop.cancel();
    task.await.unwrap().unwrap();
    assert_eq!(
        *seen.lock(),
        [(false, true, true, false)],
        "(pending before, recorded, pending after, recorded on a spawned task)"
    );
}
