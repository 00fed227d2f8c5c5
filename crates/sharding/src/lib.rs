#![doc = include_str!("../README.md")]

mod conventions;
mod drains;
mod error;
mod hash;
mod key;
mod lease_informer;
mod membership;
mod mode;
mod object_informer;
mod passes;
mod range_lease;
mod range_sharder;
mod range_terms;
mod ranges;
mod ring;
mod shard;
mod sharded_kind;
mod sharder;
mod sharding;
mod slice_label;
mod slice_labeller;
mod takeover;

pub use conventions::{
    Ring, DRAIN_LABEL_PREFIX, RING_LABEL, SHARD_LABEL_PREFIX, SLICE_LABEL_PREFIX,
};
pub use error::ShardingError;
pub use hash::hash_key;
pub use key::{object_key, KeyFn, ShardKey};
pub use membership::{list_shards, live_shards, ShardLease, ShardState};
pub use mode::Mode;
pub use range_lease::{
    list_range_assignments, RangeAssignment, ACKNOWLEDGED_ANNOTATION, GENERATION_ANNOTATION,
    RANGES_ANNOTATION, RELEASING_ANNOTATION, RELEASING_SLICES_ANNOTATION, SLICES_ANNOTATION,
};
pub use ranges::RANGE_SLICES;
pub use ring::{HashRing, DEFAULT_VIRTUAL_NODES};
pub use shard::{ReconcileFuture, Shard};
pub use sharding::Sharding;
pub use slice_label::slice_of;
