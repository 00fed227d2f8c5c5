//! Label selectors (apimachinery `labels.Parse`).

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;

use super::validate::{check_key, check_value};
use super::SelectorError;
use crate::Object;

/// A requirement's operator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Operator {
    /// `key=value`
    Equals,
    /// `key==value`
    DoubleEquals,
    /// `key!=value`: absent, or present with another value.
    NotEquals,
    /// `key in (a,b)`
    In,
    /// `key notin (a,b)`: absent, or present with a value outside the set.
    NotIn,
    /// `key`
    Exists,
    /// `!key`
    DoesNotExist,
    /// `key>n` (integer comparison)
    GreaterThan,
    /// `key<n` (integer comparison)
    LessThan,
}

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Requirement {
    /// The label key.
    pub key: String,
    /// The operator.
    pub operator: Operator,
    /// The values (one for `=`, `==`, `!=`, `>`, `<`; a set for `in`/`notin`; none otherwise).
    pub values: BTreeSet<String>,
}

impl Requirement {
    /// Whether a label set satisfies this requirement.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        let value = labels.and_then(|l| l.get(&self.key)).map(String::as_str);
        match self.operator {
            Operator::Equals | Operator::DoubleEquals | Operator::In => {
                value.is_some_and(|v| self.values.contains(v))
            }
            Operator::NotEquals | Operator::NotIn => value.is_none_or(|v| !self.values.contains(v)),
            Operator::Exists => value.is_some(),
            Operator::DoesNotExist => value.is_none(),
            Operator::GreaterThan | Operator::LessThan => {
                let (Some(v), Some(bound)) = (value, self.values.first()) else {
                    return false;
                };
                let (Ok(v), Ok(bound)) = (v.parse::<i64>(), bound.parse::<i64>()) else {
                    return false;
                };
                if self.operator == Operator::GreaterThan {
                    v > bound
                } else {
                    v < bound
                }
            }
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let first = || self.values.first().map(String::as_str).unwrap_or("");
        let joined = || self.values.iter().cloned().collect::<Vec<_>>().join(",");
        match self.operator {
            Operator::Exists => write!(f, "{}", self.key),
            Operator::DoesNotExist => write!(f, "!{}", self.key),
            Operator::Equals => write!(f, "{}={}", self.key, first()),
            Operator::DoubleEquals => write!(f, "{}=={}", self.key, first()),
            Operator::NotEquals => write!(f, "{}!={}", self.key, first()),
            Operator::GreaterThan => write!(f, "{}>{}", self.key, first()),
            Operator::LessThan => write!(f, "{}<{}", self.key, first()),
            Operator::In => write!(f, "{} in ({})", self.key, joined()),
            Operator::NotIn => write!(f, "{} notin ({})", self.key, joined()),
        }
    }
}

/// A parsed label selector: all requirements must hold. The empty selector matches everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct LabelSelector {
    requirements: Vec<Requirement>,
}

impl LabelSelector {
    /// The selector that matches everything.
    pub fn everything() -> Self {
        LabelSelector::default()
    }

    /// Parses the full Kubernetes syntax: `a=b`, `a==b`, `a!=b`, `a in (x,y)`, `a notin (x)`,
    /// `a`, `!a`, `a>1`, `a<1`, comma-separated.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let err = |message: String| SelectorError {
            kind: "label",
            input: input.into(),
            message,
        };
        let tokens = lex(input).map_err(err)?;
        let mut p = Parser {
            tokens: &tokens,
            pos: 0,
        };
        let mut requirements = Vec::new();
        if tokens.is_empty() {
            return Ok(LabelSelector::default());
        }
        loop {
            requirements.push(p.requirement().map_err(err)?);
            match p.next() {
                None => break,
                Some(Token::Comma) => {}
                Some(t) => return Err(err(format!("found {t}, expected ',' or end of selector"))),
            }
        }
        requirements.sort();
        Ok(LabelSelector { requirements })
    }

    /// Whether the selector matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// The requirements, sorted by key.
    pub fn requirements(&self) -> &[Requirement] {
        &self.requirements
    }

    /// Whether a label set matches.
    pub fn matches(&self, labels: Option<&BTreeMap<String, String>>) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// Whether an object's labels match.
    pub fn matches_object<K: Object + ?Sized>(&self, obj: &K) -> bool {
        self.matches(obj.labels())
    }
}

impl fmt::Display for LabelSelector {
    /// The canonical form: requirements sorted by key, comma-separated.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{r}")?;
        }
        Ok(())
    }
}

impl std::str::FromStr for LabelSelector {
    type Err = SelectorError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        LabelSelector::parse(s)
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    Ident(String),
    Comma,
    Bang,
    Eq,
    DoubleEq,
    NotEq,
    Gt,
    Lt,
    Open,
    Close,
}

impl fmt::Display for Token {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Ident(s) => write!(f, "identifier {s:?}"),
            Token::Comma => f.write_str("','"),
            Token::Bang => f.write_str("'!'"),
            Token::Eq => f.write_str("'='"),
            Token::DoubleEq => f.write_str("'=='"),
            Token::NotEq => f.write_str("'!='"),
            Token::Gt => f.write_str("'>'"),
            Token::Lt => f.write_str("'<'"),
            Token::Open => f.write_str("'('"),
            Token::Close => f.write_str("')'"),
        }
    }
}

fn lex(input: &str) -> Result<Vec<Token>, String> {
    let b = input.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let two = |next: u8| b.get(i + 1) == Some(&next);
        let (tok, len) = match c {
            b' ' | b'\t' | b'\n' | b'\r' => {
                i += 1;
                continue;
            }
            b',' => (Token::Comma, 1),
            b'(' => (Token::Open, 1),
            b')' => (Token::Close, 1),
            b'>' => (Token::Gt, 1),
            b'<' => (Token::Lt, 1),
            b'!' if two(b'=') => (Token::NotEq, 2),
            b'!' => (Token::Bang, 1),
            b'=' if two(b'=') => (Token::DoubleEq, 2),
            b'=' => (Token::Eq, 1),
            _ => {
                let start = i;
                while i < b.len() && !b" \t\n\r,()<>!=".contains(&b[i]) {
                    i += 1;
                }
                out.push(Token::Ident(input[start..i].to_string()));
                continue;
            }
        };
        out.push(tok);
        i += len;
    }
    Ok(out)
}

struct Parser<'a> {
    tokens: &'a [Token],
    pos: usize,
}

impl Parser<'_> {
    fn next(&mut self) -> Option<&Token> {
        let t = self.tokens.get(self.pos);
        self.pos += 1;
        t
    }

    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    fn key(&mut self, after: &str) -> Result<String, String> {
        match self.next() {
            Some(Token::Ident(k)) => {
                check_key(k)?;
                Ok(k.clone())
            }
            Some(t) => Err(format!("found {t}, expected a key {after}")),
            None => Err(format!("expected a key {after}, found end of selector")),
        }
    }

    fn requirement(&mut self) -> Result<Requirement, String> {
        let req = |key, operator, values: Vec<String>| Requirement {
            key,
            operator,
            values: values.into_iter().collect(),
        };
        if self.peek() == Some(&Token::Bang) {
            self.pos += 1;
            let key = self.key("after '!'")?;
            return Ok(req(key, Operator::DoesNotExist, vec![]));
        }
        let key = self.key("at the start of a requirement")?;
        let op = match self.peek() {
            None | Some(Token::Comma) => return Ok(req(key, Operator::Exists, vec![])),
            Some(Token::Eq) => Operator::Equals,
            Some(Token::DoubleEq) => Operator::DoubleEquals,
            Some(Token::NotEq) => Operator::NotEquals,
            Some(Token::Gt) => Operator::GreaterThan,
            Some(Token::Lt) => Operator::LessThan,
            Some(Token::Ident(w)) if w == "in" => Operator::In,
            Some(Token::Ident(w)) if w == "notin" => Operator::NotIn,
            Some(t) => {
                return Err(format!(
                    "found {t} after key {key:?}, expected one of '=', '==', '!=', '>', '<', 'in', 'notin', ',' or end"
                ))
            }
        };
        self.pos += 1;
        let values = match op {
            Operator::In | Operator::NotIn => self.value_set(&key)?,
            _ => vec![self.single_value(&key)?],
        };
        if matches!(op, Operator::GreaterThan | Operator::LessThan)
            && values[0].parse::<i64>().is_err()
        {
            return Err(format!(
                "value {:?} for key {key:?} must be an integer",
                values[0]
            ));
        }
        Ok(req(key, op, values))
    }

    fn single_value(&mut self, key: &str) -> Result<String, String> {
        match self.peek() {
            Some(Token::Ident(v)) => {
                let v = v.clone();
                self.pos += 1;
                check_value(&v)?;
                Ok(v)
            }
            // `a=` selects an empty value, as in Kubernetes.
            None | Some(Token::Comma) => Ok(String::new()),
            Some(t) => Err(format!("found {t}, expected a value for key {key:?}")),
        }
    }

    fn value_set(&mut self, key: &str) -> Result<Vec<String>, String> {
        match self.next() {
            Some(Token::Open) => {}
            Some(t) => {
                return Err(format!(
                    "found {t}, expected '(' after 'in'/'notin' for key {key:?}"
                ))
            }
            None => {
                return Err(format!(
                    "expected '(' for key {key:?}, found end of selector"
                ))
            }
        }
        let mut values = Vec::new();
        loop {
            match self.next() {
                Some(Token::Ident(v)) => {
                    check_value(v)?;
                    values.push(v.clone());
                    match self.next() {
                        Some(Token::Comma) => {}
                        Some(Token::Close) => return Ok(values),
                        Some(t) => {
                            return Err(format!("found {t}, expected ',' or ')' in value set"))
                        }
                        None => return Err(format!("unclosed value set for key {key:?}")),
                    }
                }
                // `in ()` and `in (a,)` hold the empty value, as in Kubernetes.
                Some(Token::Close) => {
                    values.push(String::new());
                    return Ok(values);
                }
                Some(Token::Comma) => values.push(String::new()),
                Some(t) => {
                    return Err(format!(
                        "found {t}, expected a value in the set for key {key:?}"
                    ))
                }
                None => return Err(format!("unclosed value set for key {key:?}")),
            }
        }
    }
}
