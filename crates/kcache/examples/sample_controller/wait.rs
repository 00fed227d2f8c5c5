//! Waiting for a condition with a deadline: the demo and the test wait for reconciliation to be
//! observed, never for a fixed time.

use std::time::Duration;

/// How often a condition is checked.
const POLL: Duration = Duration::from_millis(20);

/// A condition (what was waited for) that did not hold within the timeout.
#[derive(Debug, thiserror::Error)]
#[error("timed out after {1:?} waiting for {0}")]
pub struct WaitTimeout(pub String, pub Duration);

/// Checks `condition` until it holds or `timeout` passes. The deadline is a liveness guard:
/// conditions normally hold within milliseconds.
pub async fn wait_until(
    what: &str,
    timeout: Duration,
    mut condition: impl AsyncFnMut() -> bool,
) -> Result<(), WaitTimeout> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if condition().await {
            return Ok(());
        }
        if tokio::time::Instant::now() >= deadline {
            return Err(WaitTimeout(what.to_string(), timeout));
        }
        tokio::time::sleep(POLL).await;
    }
}
