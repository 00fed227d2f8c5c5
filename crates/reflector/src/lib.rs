#![doc = include_str!("../README.md")]

mod backoff;
mod error;
mod events;
mod handle;
mod options;
mod pager;
mod reflector;
mod watch_list;

pub use error::{default_watch_error_handler, ReflectorError, WatchErrorHandler};
pub use handle::{ReflectorHandle, ReflectorStats};
pub use options::{BackoffOptions, ReflectorOptions, WatchListMode};
pub use pager::{ListPager, PagedList, DEFAULT_PAGE_SIZE};
pub use reflector::Reflector;
