#![doc = include_str!("../README.md")]

mod boxed;
mod cache;
mod dynamic;
mod error;
mod event;
mod ignore_not_found;
#[cfg(feature = "k8s-openapi")]
mod k8s_openapi_impls;
mod key;
mod list;
mod managed_fields;
mod meta;
mod meta_de;
mod object;
mod object_mut;
mod pager;
mod params;
mod partial;
mod report;
mod resource;
mod resource_version;
pub mod selector;
mod status;
mod store_error;
mod tombstone;
mod traits;

pub use boxed::BoxListerWatcher;
pub use cache::{CacheReader, CacheWriter};
pub use dynamic::DynamicObject;
pub use error::{BoxError, Error};
pub use event::{Bookmark, WatchEvent, INITIAL_EVENTS_END_ANNOTATION};
pub use ignore_not_found::ignore_not_found;
#[cfg(feature = "k8s-openapi")]
pub use k8s_openapi_impls::ScopeNamespaced;
pub use key::{split_meta_namespace_key, KeyFormatError, ObjectKey};
pub use list::ObjectList;
pub use managed_fields::{FieldsV1, ManagedFieldsEntry};
pub use meta::{ListMeta, ObjectMeta, OwnerReference, ShardInfo, TypeMeta};
pub use object::{Object, ObjectMetaFields, OwnerRef};
pub use object_mut::ObjectMut;
pub use pager::{ListPager, PagedList, DEFAULT_PAGE_SIZE};
pub use params::{encode_query, ListParams, ResourceVersionMatch, WatchParams};
pub use partial::{PartialObjectMeta, META_API_VERSION};
pub use report::ErrorChain;
pub use resource::{ApiResource, Resource};
pub use resource_version::{
    compare_resource_versions, is_comparable_resource_version, IncomparableResourceVersion,
};
pub use status::{Status, StatusCause, StatusDetails, CAUSE_RESOURCE_VERSION_TOO_LARGE};
pub use store_error::StoreError;
pub use tombstone::{DeletedFinalStateUnknown, DeletedObject};
pub use traits::{KnownObjects, ListerWatcher, ReflectorStore, WatchStream};
