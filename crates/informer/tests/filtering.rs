//! client-go's FilteringResourceEventHandler transitions.

use crate::support;

use std::sync::Arc;

use kcache_core::Object;
use kcache_informer::{DeletedObject, FilteringResourceEventHandler, ResourceEventHandler};
use support::*;

#[test]
fn filter_translates_transitions() {
    let (rec, rx) = recorder();
    let f = FilteringResourceEventHandler::new(|p: &Pod| p.label("keep") == Some("yes"), rec);
    let keep = Arc::new(
        pod("a")
            .with_label("keep", "yes")
            .with_resource_version("1"),
    );
    let drop_ = Arc::new(pod("a").with_label("keep", "no").with_resource_version("2"));
    f.on_add(&keep, false);
    f.on_add(&drop_, false);
    f.on_update(&keep, &keep);
    f.on_update(&drop_, &keep);
    f.on_update(&keep, &drop_);
    f.on_update(&drop_, &drop_);
    f.on_delete(&DeletedObject::Object(keep.clone()));
    f.on_delete(&DeletedObject::Object(drop_.clone()));
    let seen: Vec<Seen> = rx.try_iter().collect();
    assert_eq!(
        seen,
        [
            Seen::Add("a".into(), false),
            Seen::Update("a".into(), "1".into(), "1".into()),
            Seen::Add("a".into(), false),
            Seen::Delete("a".into()),
            Seen::Delete("a".into()),
        ]
    );
}
