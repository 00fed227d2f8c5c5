//! Field selectors (apimachinery `fields.ParseSelector`).

use std::fmt;

use super::SelectorError;
use crate::Object;

/// One `field=value`, `field==value` or `field!=value` term.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct FieldRequirement {
    /// The field path, e.g. `metadata.name`.
    pub field: String,
    /// The value compared with.
    pub value: String,
    /// `true` for `!=`.
    pub negated: bool,
}

/// A parsed field selector: all terms must hold. The empty selector matches everything.
///
/// Objects are matched on `metadata.name` and `metadata.namespace` ([`matches_object`]); other
/// fields are matched through a caller-supplied lookup ([`matches_with`]), as the server does
/// with its per-resource field sets.
///
/// [`matches_object`]: FieldSelector::matches_object
/// [`matches_with`]: FieldSelector::matches_with
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct FieldSelector {
    requirements: Vec<FieldRequirement>,
}

impl FieldSelector {
    /// Parses comma-separated terms; `\`, `,` and `=` in values are escaped with `\`.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let err = |message: String| SelectorError {
            kind: "field",
            input: input.into(),
            message,
        };
        let mut requirements = Vec::new();
        for term in split_unescaped(input, ',') {
            if term.trim().is_empty() {
                if input.trim().is_empty() {
                    continue;
                }
                return Err(err("empty term".into()));
            }
            let (field, negated, raw) = if let Some(i) = find_unescaped(&term, "!=") {
                (&term[..i], true, &term[i + 2..])
            } else if let Some(i) = find_unescaped(&term, "==") {
                (&term[..i], false, &term[i + 2..])
            } else if let Some(i) = find_unescaped(&term, "=") {
                (&term[..i], false, &term[i + 1..])
            } else {
                return Err(err(format!(
                    "invalid term {term:?}: expected field=value, field==value or field!=value"
                )));
            };
            let field = field.trim();
            if field.is_empty() {
                return Err(err(format!("invalid term {term:?}: empty field name")));
            }
            let value = unescape(raw).map_err(|m| err(format!("invalid term {term:?}: {m}")))?;
            requirements.push(FieldRequirement {
                field: field.to_string(),
                value,
                negated,
            });
        }
        Ok(FieldSelector { requirements })
    }

    /// Whether the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The terms, in the order given.
    pub fn requirements(&self) -> &[FieldRequirement] {
        &self.requirements
    }

    /// Matches with a lookup from field path to value (`None`: the field is absent, read as "").
    pub fn matches_with<'a>(&self, mut lookup: impl FnMut(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| {
            let v = lookup(&r.field).unwrap_or("");
            (v == r.value) != r.negated
        })
    }

    /// Matches `metadata.name` and `metadata.namespace` of an object; a term on any other field
    /// does not match.
    pub fn matches_object<K: Object + ?Sized>(&self, obj: &K) -> bool {
        self.requirements.iter().all(|r| {
            let v = match r.field.as_str() {
                "metadata.name" => obj.name(),
                "metadata.namespace" => obj.namespace().unwrap_or(""),
                _ => return false,
            };
            (v == r.value) != r.negated
        })
    }
}

impl fmt::Display for FieldSelector {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            let op = if r.negated { "!=" } else { "=" };
            let mut escaped = String::with_capacity(r.value.len());
            for c in r.value.chars() {
                if matches!(c, '\\' | ',' | '=') {
                    escaped.push('\\');
                }
                escaped.push(c);
            }
            write!(f, "{}{op}{escaped}", r.field)?;
        }
        Ok(())
    }
}

fn split_unescaped(s: &str, sep: char) -> Vec<String> {
    let mut out = vec![String::new()];
    let mut escaped = false;
    for c in s.chars() {
        if escaped {
            out.last_mut().expect("never empty").push(c);
            escaped = false;
        } else if c == '\\' {
            out.last_mut().expect("never empty").push(c);
            escaped = true;
        } else if c == sep {
            out.push(String::new());
        } else {
            out.last_mut().expect("never empty").push(c);
        }
    }
    out
}

fn find_unescaped(s: &str, pat: &str) -> Option<usize> {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'\\' {
            i += 2;
            continue;
        }
        if s[i..].starts_with(pat) {
            return Some(i);
        }
        i += 1;
    }
    None
}

fn unescape(s: &str) -> Result<String, String> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            match chars.next() {
                Some(e @ ('\\' | ',' | '=')) => out.push(e),
                Some(e) => return Err(format!("invalid escape sequence \\{e}")),
                None => return Err("trailing backslash".into()),
            }
        } else if c == '=' || c == ',' {
            return Err(format!("unescaped {c:?} in value"));
        } else {
            out.push(c);
        }
    }
    Ok(out)
}
