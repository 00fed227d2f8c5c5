//! Incremental decoders for list and watch response bodies.

mod list;
mod naming;
pub(crate) mod protobuf;
mod scanner;
mod watch;

pub use list::{ListDecoder, ListStream};
pub use watch::{decode_event, WatchDecoder, WatchEventStream, DEFAULT_MAX_OBJECT_SIZE};
