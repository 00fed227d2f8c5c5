//! `EventBroadcaster` (client-go `tools/events` `event_broadcaster.go`, with
//! `NewEventBroadcasterAdapter`'s choice of API): the queue recorders feed, and the one task
//! that correlates and writes what it pops.

use std::sync::Arc;

use parking_lot::Mutex;
use tokio::sync::{mpsc, watch};
use tokio::task::JoinHandle;

use crate::client::{EventApi, EventClient};
use crate::error::EventsError;
use crate::limits::{self, REPORTING_INSTANCE_LENGTH_LIMIT};
use crate::options::BroadcasterOptions;
use crate::recorder::EventRecorder;
use crate::stats::{BroadcasterStats, Counters};
use crate::types::Event;
use crate::worker::Worker;

/// Writes the events its recorders queue, through an [`EventClient`].
///
/// [`start`](EventBroadcaster::start) spawns the writer task on the current tokio runtime. The
/// task first asks discovery whether `events.k8s.io/v1` is served, and writes `core/v1` events
/// otherwise. Dropping the broadcaster stops the task after it has written what is queued;
/// [`shutdown`](EventBroadcaster::shutdown) does the same and waits for it.
pub struct EventBroadcaster {
    tx: mpsc::Sender<Event>,
    counters: Arc<Counters>,
    stop: watch::Sender<bool>,
    worker: Mutex<Option<JoinHandle<()>>>,
}

impl std::fmt::Debug for EventBroadcaster {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EventBroadcaster")
            .field("api", &self.api())
            .field("stats", &self.stats())
            .finish_non_exhaustive()
    }
}

impl EventBroadcaster {
    /// Starts writing through `client` (client-go's `NewBroadcaster` +
    /// `StartRecordingToSink`).
    ///
    /// # Panics
    ///
    /// Outside a tokio runtime (the writer task is spawned on the current one), as
    /// `tokio::spawn` does.
    pub fn start<C: EventClient>(client: C, options: BroadcasterOptions) -> EventBroadcaster {
        let (tx, rx) = mpsc::channel(options.queue_capacity.max(1));
        let (stop, stop_rx) = watch::channel(false);
        let counters = Arc::new(Counters::default());
        let worker = Worker::new(client, options, counters.clone(), stop_rx);
        let handle = tokio::spawn(worker.run(rx));
        EventBroadcaster {
            tx,
            counters,
            stop,
            worker: Mutex::new(Some(handle)),
        }
    }

    /// A recorder for `reporting_controller` (e.g. `sample-controller`, or
    /// `example.com/foo-controller`), its instance named `{controller}-{hostname}` as client-go
    /// names it. The name must be a Kubernetes qualified name: the server rejects events
    /// otherwise.
    pub fn new_recorder(&self, reporting_controller: &str) -> Result<EventRecorder, EventsError> {
        let instance = format!("{reporting_controller}-{}", hostname());
        self.new_recorder_with_instance(reporting_controller, &instance)
    }

    /// A recorder with an explicit reporting instance (e.g. the pod name); an instance longer
    /// than 128 bytes is truncated.
    pub fn new_recorder_with_instance(
        &self,
        reporting_controller: &str,
        reporting_instance: &str,
    ) -> Result<EventRecorder, EventsError> {
        limits::validate_reporting_controller(reporting_controller).map_err(|problem| {
            EventsError::ReportingController {
                controller: reporting_controller.to_string(),
                problem,
            }
        })?;
        if reporting_instance.is_empty() {
            return Err(EventsError::EmptyInstance);
        }
        let instance = limits::truncate(reporting_instance, REPORTING_INSTANCE_LENGTH_LIMIT);
        Ok(EventRecorder::new(
            self.tx.clone(),
            reporting_controller.to_string(),
            instance.to_string(),
            self.counters.clone(),
        ))
    }

    /// The API events are written to, once discovery has decided.
    pub fn api(&self) -> Option<EventApi> {
        self.counters.api.get().copied()
    }

    /// What happened to recorded events so far.
    pub fn stats(&self) -> BroadcasterStats {
        self.counters.snapshot()
    }

    /// Stops accepting events, writes those already queued (each tried once) and the counts of
    /// series that moved since last written, and waits for the writer task to end.
    pub async fn shutdown(&self) {
        let _ = self.stop.send(true);
        let handle = self.worker.lock().take();
        if let Some(h) = handle {
            if let Err(e) = h.await {
                tracing::error!("the event writer task failed: {e}");
            }
        }
    }
}

impl Drop for EventBroadcaster {
    fn drop(&mut self) {
        let _ = self.stop.send(true);
    }
}

/// The host name, as client-go's `os.Hostname()` reads it on Linux.
fn hostname() -> String {
    std::env::var("HOSTNAME")
        .ok()
        .or_else(|| std::fs::read_to_string("/proc/sys/kernel/hostname").ok())
        .map(|h| h.trim().to_string())
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "unknown".into())
}
