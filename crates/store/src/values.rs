//! The values an index function returns, and the interned form the store keeps of them.

use std::borrow::Cow;
use std::sync::Arc;

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
            Repr::None => (None, &[]),
            Repr::One(v) => (Some(v), &[]),
            Repr::Many(vs) => (None, vs),
        };
        one.into_iter().chain(many).map(|v| &**v)
    }

    /// How many values (duplicates included).
    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::None => 0,
            Repr::One(_) => 1,
            Repr::Many(vs) => vs.len(),
        }
    }

    /// Whether there are no values.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The same values, owning their strings (to keep them beyond the object's lifetime).
    pub fn into_owned(self) -> IndexValues<'static> {
        IndexValues(match self.0 {
            Repr::None => Repr::None,
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

/// The values one object is indexed under in one index, as the store keeps them: deduplicated and
/// sharing each string with the index's own key for that value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Values {
    One(Arc<str>),
    /// Zero or several values (no allocation when empty).
    Many(Box<[Arc<str>]>),
}

impl Values {
    pub(crate) fn as_slice(&self) -> &[Arc<str>] {
        match self {
            Values::One(v) => std::slice::from_ref(v),
            Values::Many(vs) => vs,
        }
    }

    /// Whether these are exactly `new`'s values in the same order (the fast path of an update:
    /// nothing to move between sets).
    pub(crate) fn same_as(&self, new: &IndexValues<'_>) -> bool {
        let old = self.as_slice();
        old.len() == new.len() && old.iter().zip(new.iter()).all(|(o, n)| **o == *n)
    }

    /// Builds the stored form from interned strings, dropping duplicates.
    pub(crate) fn from_interned(mut vs: Vec<Arc<str>>) -> Values {
        if vs.len() == 1 {
            return Values::One(vs.pop().unwrap_or_else(|| Arc::from("")));
        }
        let mut seen = 0;
        for i in 0..vs.len() {
            if !vs[..seen].contains(&vs[i]) {
                vs.swap(seen, i);
                seen += 1;
            }
        }
        vs.truncate(seen);
        Values::Many(vs.into_boxed_slice())
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
    fn stored_values_drop_duplicates_and_compare_in_order() {
        let a: Arc<str> = Arc::from("a");
        let b: Arc<str> = Arc::from("b");
        let v = Values::from_interned(vec![a.clone(), b.clone(), a.clone()]);
        assert_eq!(v.as_slice(), [a.clone(), b.clone()]);
        assert!(v.same_as(&vec!["a", "b"].into()));
        assert!(!v.same_as(&vec!["b", "a"].into()));
        assert!(Values::from_interned(vec![]).same_as(&IndexValues::none()));
        assert!(Values::from_interned(vec![a]).same_as(&IndexValues::one("a")));
    }
}
