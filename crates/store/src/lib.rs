#![doc = include_str!("../README.md")]

mod index;
mod indexer;
mod indexers;
mod items;
mod key_func;
mod lister;
mod state;
mod traits;
mod values;

pub use indexer::Indexer;
pub use indexers::{meta_namespace_index_func, IndexFunc, Indexers, SameInputs, NAMESPACE_INDEX};
pub use items::Snapshot;
pub use kcache_core::StoreError;
pub use key_func::{
    deletion_handling_meta_namespace_key_func, meta_namespace_key_func, CustomKeyFunc, KeyFunc,
};
pub use lister::{list_all, list_all_by_namespace, lister_resource_name, Lister, NamespaceLister};
pub use values::IndexValues;
