//! The compact layer: informers whose pipeline carries kcache-compact's `Compact<K>` while user
//! code stays typed (cargo feature `compact`, on by default).
//!
//! It sits on top of the plain informer and reaches it through public seams only:
//!
//! - [`CompactInformer<K>`] (`informer.rs`) wraps a `SharedIndexInformer<Compact<K>>` and
//!   registers each typed handler as an adapter (`Typed`) over `Compact<K>`.
//! - The adapters of one `CompactInformer` share one decode per object of a notification
//!   (`copies.rs`): the informer hands every handler a [`Delivery`](crate::Delivery) naming the
//!   batch and place of the notification ([`ResourceEventHandler::on_delivery`]), and the
//!   adapters keep the typed copies by that batch. Nothing is passed through thread-locals or
//!   type-erased slots of the informer.
//! - [`LazyTyped<K>`] (`lazy.rs`): what a lazy handler gets, decoded on first read.
//! - [`typed_index`], [`TypedIndexes`] and [`same_at`] (`index.rs`): index functions over `&K`,
//!   and the check that spares them on updates that leave their inputs.
//!
//! The factory's `compact_informer` and `compact_metadata_informer` (feature `transport`) cache
//! the `CompactInformer` itself, so every caller's handlers share the same decodes.
//!
//! [`ResourceEventHandler::on_delivery`]: crate::ResourceEventHandler::on_delivery

mod copies;
#[cfg(feature = "transport")]
mod factory;
mod index;
mod informer;
mod lazy;

pub use index::{same_at, typed_index, TypedIndexes};
pub use informer::CompactInformer;
pub use lazy::LazyTyped;
