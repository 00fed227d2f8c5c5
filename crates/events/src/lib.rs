#![doc = include_str!("../README.md")]
//!
//! ## How an event travels
//!
//! ```text
//! EventRecorder::eventf ─ truncate to the server's limits ─▶ bounded queue (full: dropped, counted)
//!                                                               │ one writer task
//!             events.k8s.io/v1: series cache ◀──────────────────┤
//!             core/v1 (fallback): aggregate, count ◀────────────┘
//!                    │
//!                    ▼ spam filter (per source + object)
//!             EventClient: create, or merge-patch (404 → create), retried on transport errors
//! ```
//!
//! Choices where client-go leaves room (each also in the crate README):
//! - One writer task writes events in order, one at a time (client-go starts a goroutine per
//!   event): while the server is unreachable a write is retried (12 tries, 10 s apart) and the
//!   bounded queue absorbs, then drops, what comes meanwhile — memory stays bounded.
//! - On `events.k8s.io/v1`, isomorphic events (any note) are one series, which is what
//!   aggregation does for `core/v1`; the aggregator therefore runs only on the `core/v1` path.
//!   The spam filter guards both, but only writes: a repeat counted into an open series is
//!   never filtered, so counts stay true.
//! - Shutting down writes the queued events (each tried once) and the counts of series that
//!   moved since last written (client-go's `Shutdown` leaves those counts unwritten).

mod broadcaster;
mod client;
mod correlator;
mod error;
mod limits;
mod memory;
mod options;
mod recorder;
mod series;
mod stats;
mod time;
#[cfg(feature = "transport")]
mod transport;
mod types;
mod worker;
mod write;

pub use broadcaster::EventBroadcaster;
pub use client::{EventApi, EventClient};
pub use correlator::AGGREGATE_MESSAGE_PREFIX;
pub use error::EventsError;
pub use limits::{
    ACTION_LENGTH_LIMIT, NOTE_LENGTH_LIMIT, REASON_LENGTH_LIMIT, REPORTING_INSTANCE_LENGTH_LIMIT,
};
pub use memory::MemoryEventClient;
pub use options::{BroadcasterOptions, CorrelatorOptions};
pub use recorder::EventRecorder;
pub use stats::BroadcasterStats;
pub use types::{CoreEvent, Event, EventSeries, EventSource, EventType, ObjectReference};
pub use write::WriteRetry;
