//! Runnables running on their own tasks, stopped together within a deadline.

use std::panic::AssertUnwindSafe;

use futures_util::FutureExt;
use kcache_core::BoxError;
use tokio::sync::mpsc;
use tokio::task::JoinHandle;
use tokio::time::{timeout_at, Instant};
use tokio_util::sync::CancellationToken;

use crate::Runnable;

/// How a runnable ended, sent to the manager as it happens.
#[derive(Debug)]
pub(crate) struct Ended {
    pub(crate) name: String,
    /// `Err` for an error or a panic (its message).
    pub(crate) result: Result<(), BoxError>,
    /// Whether it had been told to stop.
    pub(crate) stopping: bool,
}

/// Runnables started with one token.
pub(crate) struct Group {
    token: CancellationToken,
    tasks: Vec<(String, JoinHandle<()>)>,
}

impl Group {
    /// Starts each runnable on its own task with a child of `token`; each reports its end on
    /// `ended` (a panic as an error).
    pub(crate) fn start(
        runnables: Vec<Box<dyn Runnable>>,
        token: CancellationToken,
        ended: &mpsc::UnboundedSender<Ended>,
    ) -> Group {
        let tasks = runnables
            .into_iter()
            .map(|r| {
                let name = r.name().to_string();
                let (tx, child, task_name) = (ended.clone(), token.child_token(), name.clone());
                let stopped = child.clone();
                tracing::info!(runnable = %name, "starting");
                let task = tokio::spawn(async move {
                    let result = match AssertUnwindSafe(r.start(child)).catch_unwind().await {
                        Ok(result) => result,
                        Err(panic) => Err(panic_message(&*panic).into()),
                    };
                    let _ = tx.send(Ended {
                        name: task_name,
                        result,
                        stopping: stopped.is_cancelled(),
                    });
                });
                (name, task)
            })
            .collect();
        Group { token, tasks }
    }

    /// Cancels the group's token and waits for every runnable until `deadline`; aborts and
    /// returns the names of those still running then.
    pub(crate) async fn stop(self, deadline: Instant) -> Vec<String> {
        self.token.cancel();
        let mut pending = Vec::new();
        for (name, mut task) in self.tasks {
            if timeout_at(deadline, &mut task).await.is_err() {
                task.abort();
                tracing::warn!(runnable = %name, "did not stop within the graceful shutdown timeout");
                pending.push(name);
            }
        }
        pending
    }
}

fn panic_message(panic: &(dyn std::any::Any + Send)) -> String {
    let what = panic
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a non-string payload".into());
    format!("panicked: {what}")
}
