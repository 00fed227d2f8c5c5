//! What one batch of pops tells the handlers: the outbox the pop loop fills (each notification
//! with whether it is a resync), and the notification of one cache write. Shared by the plain
//! pop path (`informer.rs`) and the atomic one (`atomic.rs`).

use std::sync::Arc;

use kcache_core::Object;

use crate::delivery::Notification;

/// Notifications of one batch of pops, each with whether it is a resync.
pub(crate) type Outbox<K> = Vec<(Notification<K>, bool)>;

/// The notification of a cache write: an update of what it replaced (a resync when the
/// resourceVersion is the same), or an add.
pub(crate) fn write_notification<K: Object>(
    obj: &Arc<K>,
    old: Option<Arc<K>>,
    is_in_initial_list: bool,
) -> (Notification<K>, bool) {
    match old {
        Some(old) => {
            let is_sync = old.resource_version() == obj.resource_version();
            let n = Notification::Update {
                old,
                new: obj.clone(),
            };
            (n, is_sync)
        }
        None => {
            let n = Notification::Add {
                obj: obj.clone(),
                is_in_initial_list,
            };
            (n, false)
        }
    }
}
