#![doc = include_str!("../README.md")]

mod apply;
#[cfg(feature = "k8s-openapi")]
pub mod conditions;
pub mod create_or_update;
pub mod finalizer;
pub mod manager;
mod owner;
mod runnable;

pub use apply::{apply, apply_status};
pub use create_or_update::{create_or_patch, create_or_update, OperationResult};
pub use finalizer::finalizer;
pub use manager::{Manager, ManagerBuilder, ManagerError};
pub use owner::{
    has_controller_reference, owner_reference, remove_owner_reference, set_controller_reference,
    set_controller_reference_with, set_owner_reference, set_owner_reference_with, OwnerError,
};
pub use runnable::{BoxFuture, Runnable};
