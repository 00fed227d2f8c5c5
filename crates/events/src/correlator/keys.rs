//! The keys client-go's correlator groups events by (events_cache.go `getEventKey`,
//! `getSpamKey`, `EventAggregatorByReasonFunc`), joined with a separator so that adjacent
//! fields cannot run into each other (client-go joins with "").

use crate::types::{CoreEvent, ObjectReference};

fn join(parts: &[&str]) -> String {
    parts.join("\u{0}")
}

/// `getSpamKey`: the source and the object — every event about one object from one source
/// shares one token bucket.
pub(crate) fn spam_key(component: &str, host: &str, obj: &ObjectReference) -> String {
    join(&[
        component,
        host,
        &obj.kind,
        &obj.namespace,
        &obj.name,
        &obj.uid,
        &obj.api_version,
    ])
}

/// `getEventKey`: identical events (same source, object, type, reason and message) are one
/// event whose `count` grows.
pub(crate) fn event_key(e: &CoreEvent) -> String {
    let o = &e.involved_object;
    join(&[
        &e.source.component,
        &e.source.host,
        &o.kind,
        &o.namespace,
        &o.name,
        &o.field_path,
        &o.uid,
        &o.api_version,
        &e.type_,
        &e.reason,
        &e.message,
    ])
}

/// `EventAggregatorByReasonFunc`: similar events (same as identical but for the message) are
/// aggregated; returns the aggregate key and the local key (the message).
pub(crate) fn aggregate_key(e: &CoreEvent) -> (String, &str) {
    let o = &e.involved_object;
    let key = join(&[
        &e.source.component,
        &e.source.host,
        &o.kind,
        &o.namespace,
        &o.name,
        &o.uid,
        &o.api_version,
        &e.type_,
        &e.reason,
        &e.reporting_component,
        &e.reporting_instance,
    ]);
    (key, &e.message)
}
