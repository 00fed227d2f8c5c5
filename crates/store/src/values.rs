//! The values an index function returns, and the interned form the store keeps of them.

use std::borrow::Cow;

/// What an index function returns: the values an object is indexed under (client-go's
/// `[]string`).
///
/// Values may borrow from the object, so the common one-value index (a label, the namespace, a
/// field) costs no allocation when the value is already in the index. Duplicates are ignored.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct IndexValues<'a>(Repr<'a>);

#[derive(Debug, Clone, PartialEq, Eq, Default)]
enum Repr<'a> {
    #[default]
    None,
    One(Cow<'a, str>),
    Many(Vec<Cow<'a, str>>),
    /// Not computed: the object being replaced had the same inputs (see
    /// [`Indexers::with_reuse`](crate::Indexers::with_reuse)), so the write keeps its values.
    /// Only the store makes it, and only for a replacement; it reads as no values.
    Kept,
}

impl<'a> IndexValues<'a> {
    /// No values: the object is in no set of this index.
    pub fn none() -> Self {
        IndexValues(Repr::None)
    }

    /// Exactly one value.
    pub fn one(value: impl Into<Cow<'a, str>>) -> Self {
        IndexValues(Repr::One(value.into()))
    }

    /// The values, in the order given (duplicates included).
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let (one, many): (Option<&Cow<'a, str>>, &[Cow<'a, str>]) = match &self.0 {
            Repr::None | Repr::Kept => (None, &[]),
            Repr::One(v) => (Some(v), &[]),
            Repr::Many(vs) => (None, vs),
        };
        one.into_iter().chain(many).map(|v| &**v)
    }

    /// How many values (duplicates included).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::None | Repr::Kept => 0,
            Repr::One(_) => 1,
            Repr::Many(vs) => vs.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The marker for values not computed because the replaced object's are kept.
    pub(crate) fn kept() -> Self {
        IndexValues(Repr::Kept)
    }

    /// Whether these are [`IndexValues::kept`].
    pub(crate) fn is_kept(&self) -> bool {
        matches!(self.0, Repr::Kept)
    }

    /// The same values, owning their strings (to keep them beyond the object's lifetime).
    pub fn into_owned(self) -> IndexValues<'static> {
        IndexValues(match self.0 {
            Repr::None => Repr::None,
            Repr::Kept => Repr::Kept,
            Repr::One(v) => Repr::One(Cow::Owned(v.into_owned())),
            Repr::Many(vs) => {
                Repr::Many(vs.into_iter().map(|v| Cow::Owned(v.into_owned())).collect())
            }
        })
    }
}

impl<'a, V: Into<Cow<'a, str>>> FromIterator<V> for IndexValues<'a> {
    fn from_iter<I: IntoIterator<Item = V>>(iter: I) -> Self {
        let mut vs: Vec<Cow<'a, str>> = iter.into_iter().map(Into::into).collect();
        match vs.len() {
            0 => IndexValues(Repr::None),
            1 => IndexValues(Repr::One(vs.pop().unwrap_or_default())),
            _ => IndexValues(Repr::Many(vs)),
        }
    }
}

impl From<Vec<String>> for IndexValues<'static> {
    /// client-go's `[]string` shape.
    fn from(vs: Vec<String>) -> Self {
        vs.into_iter().collect()
    }
}

impl<'a> From<Vec<&'a str>> for IndexValues<'a> {
    fn from(vs: Vec<&'a str>) -> Self {
        vs.into_iter().collect()
    }
}

/// The sets one object is in, in one index, as the store keeps them: the ids the index gave
/// those sets (see [`crate::index::Index`]), deduplicated, in the order of the values.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Values {
    One(u32),
    /// Zero or several.
    // Boxed twice so the common `One` keeps the enum at 16 bytes.
    #[allow(clippy::box_collection)]
    Many(Box<Vec<u32>>),
}

impl Values {
    pub(crate) fn as_slice(&self) -> &[u32] {
        match self {
            Values::One(id) => std::slice::from_ref(id),
            Values::Many(ids) => ids,
        }
    }

    /// The stored form of `ids`, dropping duplicates (the first of each stays).
    pub(crate) fn from_ids(mut ids: Vec<u32>) -> Values {
        if let [id] = ids[..] {
            return Values::One(id);
        }
        let mut seen = 0;
        for i in 0..ids.len() {
            if !ids[..seen].contains(&ids[i]) {
                ids.swap(seen, i);
                seen += 1;
            }
        }
        ids.truncate(seen);
        Values::Many(Box::new(ids))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builds_from_client_go_shapes() {
        let v: IndexValues = vec!["a".to_string(), "b".to_string()].into();
        assert_eq!(v.iter().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(IndexValues::one("x").iter().collect::<Vec<_>>(), ["x"]);
        assert!(IndexValues::none().is_empty());
        let one: IndexValues = vec!["only"].into();
        assert_eq!(one, IndexValues::one("only"));
    }

    #[test]
    fn stored_values_drop_duplicates_in_order() {
        assert_eq!(Values::from_ids(vec![7]), Values::One(7));
        assert_eq!(Values::from_ids(vec![3, 5, 3, 5, 1]).as_slice(), [3, 5, 1]);
        assert!(Values::from_ids(vec![]).as_slice().is_empty());
    }
}
