#![doc = include_str!("../README.md")]

mod atomic;
mod delta;
mod error;
mod fifo;
mod in_order;
mod initial_sync;
mod keyed;
mod options;
mod popped;
mod progress;
mod queue;
mod rules;

pub use atomic::AtomicEvent;
pub use delta::{Delta, DeltaObject, DeltaType, Deltas};
pub use error::Error;
pub use fifo::{DeltaFifo, QueueMetrics};
pub use kcache_core::DeletedFinalStateUnknown;
pub use options::{DeltaFifoOptions, FifoMode, TransformFunc};
pub use popped::{Popped, PoppedBatch, PoppedEntry};
pub use progress::ResourceVersionObserver;
pub use queue::Queue;
