//! Query-string decoding (`application/x-www-form-urlencoded`, as Go's `url.ParseQuery`).

use std::collections::HashMap;

/// The decoded query parameters; a repeated name keeps its first value.
#[derive(Debug, Default, Clone)]
pub(crate) struct Query(HashMap<String, String>);

impl Query {
    pub(crate) fn parse(raw: Option<&str>) -> Self {
        let mut map = HashMap::new();
        for pair in raw.unwrap_or("").split('&').filter(|p| !p.is_empty()) {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            map.entry(decode(k)).or_insert_with(|| decode(v));
        }
        Query(map)
    }

    /// A parameter's value; empty values count as absent.
    pub(crate) fn get(&self, name: &str) -> Option<&str> {
        self.0
            .get(name)
            .map(String::as_str)
            .filter(|v| !v.is_empty())
    }

    /// A boolean parameter (`true`/`1`).
    pub(crate) fn flag(&self, name: &str) -> bool {
        matches!(self.get(name), Some("true" | "1"))
    }
}

fn decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        match b[i] {
            b'+' => out.push(b' '),
            b'%' if i + 2 < b.len() => match (hex(b[i + 1]), hex(b[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push(h << 4 | l);
                    i += 2;
                }
                _ => out.push(b'%'),
            },
            c => out.push(c),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
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
            "labelSelector=app+in+%28a%2Cb%29&watch=1&x=&bad=%zz&end=%4",
        ));
        assert_eq!(q.get("labelSelector"), Some("app in (a,b)"));
        assert!(q.flag("watch"));
        assert_eq!(q.get("x"), None);
        assert_eq!(q.get("bad"), Some("%zz"));
        assert_eq!(q.get("end"), Some("%4"));
    }
}
