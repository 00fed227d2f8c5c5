//! Incremental decoders for list and watch response bodies.

mod batch;
mod json_text;
mod list;
mod naming;
pub(crate) mod protobuf;
#[cfg(test)]
mod protobuf_differential;
mod protobuf_kinds;
mod protobuf_list;
mod raw_json;
mod scanner;
mod trim;
mod watch;

pub use list::{ListDecoder, ListStream};
pub use protobuf::is_unknown_field;
pub use protobuf_kinds::ItemKind;
pub use protobuf_list::ListSplitter;
pub use trim::{exact_copy, keep, Trim};
pub use watch::{decode_event, WatchDecoder, WatchEventStream, DEFAULT_MAX_OBJECT_SIZE};
