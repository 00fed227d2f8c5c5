//! One write of an event, and its retries: client-go's `recordEvent` / `attemptRecording`
//! (tools/events and tools/record share the rules).
//!
//! An update (a series, or a counted core/v1 event) is a merge patch; a patch answered 404
//! (the event expired or was deleted) becomes a create with an empty resourceVersion. A
//! `Status` from the server is final, except `AlreadyExists` on the create that followed such a
//! 404 (the event was created concurrently): retried. Connection and transport errors are
//! retried up to [`WriteRetry::max_tries`] times, [`WriteRetry::sleep`] apart (the first sleep
//! randomised so clients that lost the same server do not return in step).

use std::time::Duration;

use kcache_core::Error;
use serde_json::Value;
use tokio::sync::watch;

use crate::client::EventClient;
use crate::types::{CoreEvent, Event};

/// How often and how patiently a failed write is retried.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WriteRetry {
    /// Attempts per event, the first included (client-go's `maxTriesPerEvent`: 12).
    pub max_tries: u32,
    /// Between attempts (client-go's default `sleepDuration`: 10 s).
    pub sleep: Duration,
}

impl Default for WriteRetry {
    fn default() -> Self {
        WriteRetry {
            max_tries: 12,
            sleep: Duration::from_secs(10),
        }
    }
}

/// How one attempt ended.
pub(crate) enum Attempt<T> {
    /// Written; the server's copy.
    Written(T),
    /// Try again later.
    Retry,
    /// Never going to work: logged, dropped.
    GiveUp,
}

/// An event of either API, as the writer sees it.
pub(crate) trait Writable: Clone + Send + Sync {
    fn key(&self) -> (String, String);
    fn clear_resource_version(&mut self);
    fn create<C: EventClient>(
        &self,
        c: &C,
    ) -> impl std::future::Future<Output = Result<Self, Error>> + Send;
    fn patch<C: EventClient>(
        c: &C,
        ns: &str,
        name: &str,
        p: &Value,
    ) -> impl std::future::Future<Output = Result<Self, Error>> + Send;
}

impl Writable for Event {
    fn key(&self) -> (String, String) {
        (
            self.metadata.namespace.clone().unwrap_or_default(),
            self.metadata.name.clone(),
        )
    }
    fn clear_resource_version(&mut self) {
        self.metadata.resource_version = None;
    }
    async fn create<C: EventClient>(&self, c: &C) -> Result<Self, Error> {
        c.create_event(self).await
    }
    async fn patch<C: EventClient>(c: &C, ns: &str, name: &str, p: &Value) -> Result<Self, Error> {
        c.patch_event(ns, name, p).await
    }
}

impl Writable for CoreEvent {
    fn key(&self) -> (String, String) {
        (
            self.metadata.namespace.clone().unwrap_or_default(),
            self.metadata.name.clone(),
        )
    }
    fn clear_resource_version(&mut self) {
        self.metadata.resource_version = None;
    }
    async fn create<C: EventClient>(&self, c: &C) -> Result<Self, Error> {
        c.create_core_event(self).await
    }
    async fn patch<C: EventClient>(c: &C, ns: &str, name: &str, p: &Value) -> Result<Self, Error> {
        c.patch_core_event(ns, name, p).await
    }
}

/// One attempt: patch when `patch` is given (falling back to create on 404), else create.
pub(crate) async fn write_once<C: EventClient, E: Writable>(
    client: &C,
    event: &E,
    patch: Option<&Value>,
) -> Attempt<E> {
    let (ns, name) = event.key();
    let mut result = None;
    if let Some(p) = patch {
        result = Some(E::patch(client, &ns, &name, p).await);
    }
    let is_update = patch.is_some();
    let result = match result {
        Some(r) if !r.as_ref().is_err_and(Error::is_not_found) => r,
        _ => {
            if is_update {
                let mut fresh = event.clone();
                fresh.clear_resource_version();
                fresh.create(client).await
            } else {
                event.create(client).await
            }
        }
    };
    match result {
        Ok(written) => Attempt::Written(written),
        Err(e) => match e.status() {
            Some(s) if s.reason == "AlreadyExists" && is_update => Attempt::Retry,
            Some(s) if s.reason == "AlreadyExists" => {
                tracing::debug!(namespace = %ns, name = %name, "server rejected event (will not retry!): {e}");
                Attempt::GiveUp
            }
            Some(_) => {
                tracing::error!(namespace = %ns, name = %name, "server rejected event (will not retry!): {e}");
                Attempt::GiveUp
            }
            None => {
                tracing::warn!(namespace = %ns, name = %name, "unable to write event (may retry after sleeping): {e}");
                Attempt::Retry
            }
        },
    }
}

/// Writes with retries until written, given up, out of tries or `stop` is set. `None` when not
/// written.
pub(crate) async fn write_with_retries<C: EventClient, E: Writable>(
    client: &C,
    event: &E,
    patch: Option<&Value>,
    retry: WriteRetry,
    stop: &mut watch::Receiver<bool>,
) -> Option<E> {
    let mut tries = 0;
    loop {
        match write_once(client, event, patch).await {
            Attempt::Written(e) => return Some(e),
            Attempt::GiveUp => return None,
            Attempt::Retry => {}
        }
        tries += 1;
        let (ns, name) = event.key();
        if tries >= retry.max_tries {
            tracing::error!(namespace = %ns, name = %name, "unable to write event (retry limit exceeded!)");
            return None;
        }
        if *stop.borrow() {
            tracing::error!(namespace = %ns, name = %name, "unable to write event (broadcaster is shut down)");
            return None;
        }
        let delay = match tries {
            1 => retry.sleep.mul_f64(rand::random::<f64>()),
            _ => retry.sleep,
        };
        tokio::select! {
            () = tokio::time::sleep(delay) => {}
            _ = stop.wait_for(|s| *s) => {
                tracing::error!(namespace = %ns, name = %name, "unable to write event (broadcaster is shut down)");
                return None;
            }
        }
    }
}
