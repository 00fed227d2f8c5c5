//! Event filters per source (controller-runtime's `pkg/predicate`, kube-runtime's
//! `predicates`), composable with [`Predicate::and`], [`Predicate::or`] and [`Predicate::not`].

use std::fmt;
use std::sync::Arc;

use kcache_core::Object;

/// One event a source saw, as a predicate is asked about it.
#[derive(Debug)]
pub enum Event<'a, K> {
    /// An object appeared (also: each object of the initial list).
    Create(&'a K),
    /// An object changed, or was resynced (then both share a resourceVersion).
    Update {
        /// The state before.
        old: &'a K,
        /// The state after.
        new: &'a K,
    },
    /// An object was deleted (the last known state).
    Delete(&'a K),
}

type Check<K> = Arc<dyn Fn(&Event<'_, K>) -> bool + Send + Sync>;

/// Whether an event should reach the queue. Cheap to clone.
///
/// The built-in ones filter updates only (creates and deletes pass), as controller-runtime's do.
pub struct Predicate<K>(Check<K>);

impl<K> Clone for Predicate<K> {
    fn clone(&self) -> Self {
        Predicate(self.0.clone())
    }
}

impl<K> fmt::Debug for Predicate<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Predicate")
    }
}

impl<K: Object> Predicate<K> {
    /// Any closure over an [`Event`] (controller-runtime's `predicate.Funcs`).
    pub fn new(f: impl Fn(&Event<'_, K>) -> bool + Send + Sync + 'static) -> Self {
        Predicate(Arc::new(f))
    }

    /// A closure over the object — the new one for updates (controller-runtime's
    /// `NewPredicateFuncs`).
    pub fn from_object(f: impl Fn(&K) -> bool + Send + Sync + 'static) -> Self {
        Predicate::new(move |e| match e {
            Event::Create(o) | Event::Delete(o) => f(o),
            Event::Update { new, .. } => f(new),
        })
    }

    /// Objects labelled `key=value` — the new one for updates (controller-runtime's
    /// `LabelSelectorPredicate` with one `matchLabels` entry; `.and` more): a controller of
    /// only the objects labelled for it, while its informer still sees them all.
    pub fn has_label(key: impl Into<String>, value: impl Into<String>) -> Self {
        let (key, value) = (key.into(), value.into());
        Predicate::from_object(move |o: &K| o.label(&key) == Some(value.as_str()))
    }

    /// Updates only when `changed(old, new)`; creates and deletes pass.
    fn on_update(changed: impl Fn(&K, &K) -> bool + Send + Sync + 'static) -> Self {
        Predicate::new(move |e| match e {
            Event::Update { old, new } => changed(old, new),
            _ => true,
        })
    }

    /// Updates whose `metadata.generation` changed: spec changes, not status or metadata ones
    /// (controller-runtime's `GenerationChangedPredicate`). Kinds without a generation never
    /// pass an update.
    pub fn generation_changed() -> Self {
        Predicate::on_update(|o: &K, n: &K| o.generation() != n.generation())
    }

    /// Updates whose labels changed (`LabelChangedPredicate`).
    pub fn labels_changed() -> Self {
        Predicate::on_update(|o: &K, n: &K| o.labels() != n.labels())
    }

    /// Updates whose annotations changed (`AnnotationChangedPredicate`).
    pub fn annotations_changed() -> Self {
        Predicate::on_update(|o: &K, n: &K| o.annotations() != n.annotations())
    }

    /// Updates whose resourceVersion changed: drops resyncs (`ResourceVersionChangedPredicate`).
    pub fn resource_version_changed() -> Self {
        Predicate::on_update(|o: &K, n: &K| o.resource_version() != n.resource_version())
    }

    /// Both pass.
    pub fn and(self, other: Predicate<K>) -> Self {
        Predicate::new(move |e| (self.0)(e) && (other.0)(e))
    }

    /// Either passes.
    pub fn or(self, other: Predicate<K>) -> Self {
        Predicate::new(move |e| (self.0)(e) || (other.0)(e))
    }

    /// The opposite.
    #[allow(clippy::should_implement_trait)]
    pub fn not(self) -> Self {
        Predicate::new(move |e| !(self.0)(e))
    }

    /// Whether `event` passes.
    pub fn accepts(&self, event: &Event<'_, K>) -> bool {
        (self.0)(event)
    }
}

/// Whether every predicate in `all` passes `event` (a source's predicates are and-ed, as
/// controller-runtime's `WithPredicates`).
pub(crate) fn all_accept<K: Object>(all: &[Predicate<K>], event: &Event<'_, K>) -> bool {
    all.iter().all(|p| p.accepts(event))
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::{DynamicObject, ObjectMeta};
    use std::collections::BTreeMap;

    fn obj(rv: &str, generation: i64, label: Option<&str>, note: Option<&str>) -> DynamicObject {
        let map = |v: Option<&str>| v.map(|v| BTreeMap::from([("k".to_string(), v.to_string())]));
        DynamicObject {
            metadata: ObjectMeta {
                name: "a".into(),
                resource_version: Some(rv.into()),
                generation: Some(generation),
                labels: map(label),
                annotations: map(note),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    fn update<'a>(old: &'a DynamicObject, new: &'a DynamicObject) -> Event<'a, DynamicObject> {
        Event::Update { old, new }
    }

    #[test]
    fn built_in_predicates_filter_updates_only() {
        let base = obj("1", 1, Some("x"), None);
        let status_only = obj("2", 1, Some("x"), None);
        let spec = obj("3", 2, Some("x"), None);
        let relabel = obj("4", 1, Some("y"), None);
        let annotated = obj("5", 1, Some("x"), Some("n"));
        let g = Predicate::generation_changed();
        assert!(!g.accepts(&update(&base, &status_only)));
        assert!(g.accepts(&update(&base, &spec)));
        assert!(g.accepts(&Event::Create(&base)));
        assert!(g.accepts(&Event::Delete(&base)));
        assert!(Predicate::labels_changed().accepts(&update(&base, &relabel)));
        assert!(!Predicate::labels_changed().accepts(&update(&base, &spec)));
        assert!(Predicate::annotations_changed().accepts(&update(&base, &annotated)));
        assert!(!Predicate::annotations_changed().accepts(&update(&base, &relabel)));
        let rv = Predicate::resource_version_changed();
        assert!(!rv.accepts(&update(&base, &base)), "a resync is dropped");
        assert!(rv.accepts(&update(&base, &status_only)));
    }

    #[test]
    fn has_label_checks_the_new_object() {
        let x = obj("1", 1, Some("x"), None);
        let y = obj("2", 1, Some("y"), None);
        let unlabelled = obj("3", 1, None, None);
        let p = Predicate::has_label("k", "x");
        assert!(p.accepts(&Event::Create(&x)));
        assert!(p.accepts(&Event::Delete(&x)));
        assert!(!p.accepts(&Event::Create(&y)));
        assert!(!p.accepts(&Event::Create(&unlabelled)));
        assert!(p.accepts(&update(&y, &x)), "labelled now");
        assert!(!p.accepts(&update(&x, &y)), "no longer labelled");
    }

    #[test]
    fn predicates_compose() {
        let base = obj("1", 1, Some("x"), None);
        let relabel = obj("2", 1, Some("y"), None);
        let spec = obj("3", 2, Some("x"), None);
        let either = Predicate::generation_changed().or(Predicate::labels_changed());
        assert!(either.accepts(&update(&base, &relabel)));
        assert!(either.accepts(&update(&base, &spec)));
        let both = Predicate::generation_changed().and(Predicate::labels_changed());
        assert!(!both.accepts(&update(&base, &relabel)));
        let not_spec = Predicate::generation_changed().not();
        assert!(not_spec.accepts(&update(&base, &relabel)));
        assert!(!not_spec.accepts(&update(&base, &spec)));
        let named = Predicate::from_object(|o: &DynamicObject| o.label("k") == Some("y"));
        assert!(named.accepts(&update(&base, &relabel)));
        assert!(!named.accepts(&Event::Create(&base)));
        assert!(all_accept(&[], &Event::Create(&base)));
        assert!(!all_accept(&[either, named], &update(&base, &spec)));
    }
}
