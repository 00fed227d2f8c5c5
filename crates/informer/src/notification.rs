//! What a processor listener buffers for its handler.

use std::sync::Arc;

use crate::handler::{DeletedObject, ResourceEventHandler};

/// One notification for one handler (client-go's add/update/deleteNotification).
pub(crate) enum Notification<K> {
    Add {
        obj: Arc<K>,
        is_in_initial_list: bool,
    },
    Update {
        old: Arc<K>,
        new: Arc<K>,
    },
    Delete(DeletedObject<K>),
}

impl<K> Clone for Notification<K> {
    fn clone(&self) -> Self {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => Notification::Add {
                obj: obj.clone(),
                is_in_initial_list: *is_in_initial_list,
            },
            Notification::Update { old, new } => Notification::Update {
                old: old.clone(),
                new: new.clone(),
            },
            Notification::Delete(d) => Notification::Delete(d.clone()),
        }
    }
}

impl<K: 'static> Notification<K> {
    /// Calls the matching handler method.
    pub(crate) fn deliver(&self, handler: &dyn ResourceEventHandler<K>) {
        match self {
            Notification::Add {
                obj,
                is_in_initial_list,
            } => handler.on_add(obj, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete(d) => handler.on_delete(d),
        }
    }

    /// Whether this is an add of the initial list (counted by the listener's sync tracker).
    pub(crate) fn is_initial_add(&self) -> bool {
        matches!(
            self,
            Notification::Add {
                is_in_initial_list: true,
                ..
            }
        )
    }
}
