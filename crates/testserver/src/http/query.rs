//! Query parameters, decoded and converted the way kube-apiserver 1.20 does it.
//!
//! - Decoding is Go 1.15's `url.ParseQuery` (the Go kube-apiserver 1.20.2 is built with):
//!   pairs split on `&` and `;`, `+` is a space, and a pair with a malformed `%` escape is
//!   dropped.
//! - Scalars read the first value of a repeated name; `dryRun` reads them all.
//! - Booleans (`watch`, `allowWatchBookmarks`, `orphanDependents`, `force`, `export`,
//!   `exact`, `sendInitialEvents`) follow apimachinery's `Convert_Slice_string_To_bool`, **not**
//!   `strconv.ParseBool`: only `false` (any case) and `0` are false; any other value,
//!   `yes` and the empty string included, is true. So `watch=True` (the Python client),
//!   `watch=1`, `watch=T` and even `watch=yes` start a watch, as on the real server.
//! - Integers (`limit`, `timeoutSeconds`, `gracePeriodSeconds`) follow `strconv.ParseInt`:
//!   anything else answers 400 with Go's error (`strconv.ParseInt: parsing "x": invalid
//!   syntax`), the empty value included.
//! - Unknown parameters are ignored.

use std::collections::HashMap;

use crate::http::responses::ApiError;

/// The decoded query parameters, every value of each name in order.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query(HashMap<String, Vec<String>>);

impl Query {
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        let mut map: HashMap<String, Vec<String>> = HashMap::new();
        for pair in raw
            .unwrap_or("")
            .split(['&', ';'])
            .filter(|p| !p.is_empty())
        {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            if let (Some(k), Some(v)) = (decode(k), decode(v)) {
                map.entry(k).or_default().push(v);
            }
        }
        Query(map)
    }

    /// A string parameter's first value; empty values count as absent (as an empty Go string).
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.first(name).filter(|v| !v.is_empty())
    }

    /// Every value of a repeated parameter (`dryRun`).
    pub(crate) fn all(&self, name: &str) -> Option<&[String]> {
        self.0.get(name).map(Vec::as_slice)
    }

    fn first(&self, name: &str) -> Option<&str> {
        self.0.get(name).and_then(|v| v.first()).map(String::as_str)
    }

    /// A boolean parameter: false when absent.
    pub(crate) fn flag(&self, name: &str) -> bool {
        self.opt_flag(name).unwrap_or(false)
    }

    /// A `*bool` parameter: `None` when absent.
    pub(crate) fn opt_flag(&self, name: &str) -> Option<bool> {
        self.first(name)
            .map(|v| !(v == "0" || v.eq_ignore_ascii_case("false")))
    }

    /// An integer parameter: `None` when absent, 400 when it is not a base-10 `int64`.
    pub(crate) fn int(&self, name: &str) -> Result<Option<i64>, ApiError> {
        self.first(name)
            .map(|v| parse_int(v).map_err(ApiError::bad_request))
            .transpose()
    }
}

/// Go's `strconv.ParseInt(s, 10, 64)`, with its error text.
fn parse_int(s: &str) -> Result<i64, String> {
    let digits = s.strip_prefix(['+', '-']).unwrap_or(s);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(format!(
            "strconv.ParseInt: parsing {}: invalid syntax",
            go_quote(s)
        ));
    }
    // Rust's parser takes the same sign and digits; failing now means out of range.
    s.parse::<i64>().map_err(|_| {
        format!(
            "strconv.ParseInt: parsing {}: value out of range",
            go_quote(s)
        )
    })
}

/// A string quoted as Go's `%q` does for the values clients send (ASCII and printable text).
pub(crate) fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// `QueryUnescape`: `None` for a malformed escape (Go drops such a pair).
fn decode(s: &str) -> Option<String> {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' => {
                let h = b.get(i + 1).copied().and_then(hex)?;
                let l = b.get(i + 2).copied().and_then(hex)?;
                out.push(h << 4 | l);
                i += 2;
            }
            c => out.push(c),
        }
        i += 1;
    }
    Some(String::from_utf8_lossy(&out).into_owned())
}

fn hex(c: u8) -> Option<u8> {
    (c as char).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_like_go() {
        let q = Query::parse(Some(
            "labelSelector=app+in+%28a%2Cb%29&watch=1&x=&bad=%zz&end=%4;semi=1&dryRun=All&dryRun=x",
        ));
        assert_eq!(q.get("labelSelector"), Some("app in (a,b)"));
        assert!(q.flag("watch"));
        assert_eq!(q.get("x"), None);
        assert_eq!(q.all("x"), Some(&[String::new()][..]));
        assert_eq!(q.get("bad"), None);
        assert_eq!(q.get("end"), None);
        assert_eq!(q.get("semi"), Some("1"));
        assert_eq!(q.all("dryRun").unwrap(), ["All", "x"]);
    }

    #[test]
    fn booleans_are_false_only_for_false_and_0() {
        for v in ["1", "t", "T", "TRUE", "true", "True", "yes", "", "2"] {
            let q = Query::parse(Some(&format!("watch={v}")));
            assert!(q.flag("watch"), "{v}");
        }
        for v in ["0", "false", "False", "FALSE", "fAlSe"] {
            let q = Query::parse(Some(&format!("watch={v}")));
            assert!(!q.flag("watch"), "{v}");
            assert_eq!(q.opt_flag("watch"), Some(false));
        }
        assert!(!Query::parse(Some("watch")).all("watch").unwrap().is_empty());
        assert!(Query::parse(Some("watch")).flag("watch"));
        assert_eq!(Query::parse(None).opt_flag("watch"), None);
    }

    #[test]
    fn integers_parse_like_strconv() {
        let q = Query::parse(Some(
            "a=12&b=-3&c=%2B4&d=abc&e=&f=99999999999999999999&g=1.5",
        ));
        assert_eq!(q.int("a").unwrap(), Some(12));
        assert_eq!(q.int("b").unwrap(), Some(-3));
        assert_eq!(q.int("c").unwrap(), Some(4));
        assert_eq!(q.int("none").unwrap(), None);
        let msg = |n: &str| q.int(n).unwrap_err().status.message;
        assert_eq!(
            msg("d"),
            "strconv.ParseInt: parsing \"abc\": invalid syntax"
        );
        assert_eq!(msg("e"), "strconv.ParseInt: parsing \"\": invalid syntax");
        assert_eq!(
            msg("f"),
            "strconv.ParseInt: parsing \"99999999999999999999\": value out of range"
        );
        assert_eq!(
            msg("g"),
            "strconv.ParseInt: parsing \"1.5\": invalid syntax"
        );
        assert_eq!(q.int("d").unwrap_err().status.code, 400);
    }
}
