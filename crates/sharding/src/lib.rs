#![doc = include_str!("../README.md")]

mod conventions;
mod drains;
mod hash;
mod key;
mod lease_informer;
mod membership;
mod object_informer;
mod ring;
mod shard;
mod sharded_kind;
mod sharder;
mod sharding;

pub use conventions::{Ring, DRAIN_LABEL_PREFIX, RING_LABEL, SHARD_LABEL_PREFIX};
pub use hash::hash_key;
pub use key::{object_key, KeyFn, ShardKey};
pub use membership::{list_shards, live_shards, ShardLease, ShardState};
pub use ring::{HashRing, DEFAULT_VIRTUAL_NODES};
pub use shard::{ReconcileFuture, Shard};
pub use sharding::Sharding;
