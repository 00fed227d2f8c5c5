#![doc = include_str!("../README.md")]

mod backoff;
mod error;
mod events;
mod handle;
mod options;
mod reflector;
mod temporary_store;
mod watch_list;

pub use error::{default_watch_error_handler, ReflectorError, WatchErrorHandler};
pub use handle::{ReflectorHandle, ReflectorStats};
pub use options::{BackoffOptions, ReflectorOptions, WatchListMode};
pub use reflector::Reflector;
