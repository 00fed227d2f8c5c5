//! Indented JSON, as the API server writes it for `pretty=true` (and for curl, wget and
//! browsers by default) and always for `/version`: two spaces per level, `": "` after keys,
//! empty objects and arrays kept as `{}` and `[]`, no trailing newline; `managedFields`'
//! `fieldsV1` stays compact (a raw message the indenting encoder copies as is).

/// `compact` (JSON as [`super::to_vec`] writes it) re-indented; key order and escaping kept.
pub(crate) fn indent(compact: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(compact.len() * 2);
    let mut depth = 0usize;
    let mut i = 0;
    let newline = |out: &mut Vec<u8>, depth: usize| {
        out.push(b'\n');
        out.resize(out.len() + depth * 2, b' ');
    };
    while i < compact.len() {
        let c = compact[i];
        match c {
            b'"' => {
                let end = string_end(compact, i);
                let s = &compact[i..end];
                out.extend_from_slice(s);
                i = end;
                // A raw `fieldsV1` object is written as it is.
                if s == b"\"fieldsV1\"" && compact.get(i) == Some(&b':') {
                    out.extend_from_slice(b": ");
                    let value_end = value_end(compact, i + 1);
                    out.extend_from_slice(&compact[i + 1..value_end]);
                    i = value_end;
                }
                continue;
            }
            b'{' | b'[' => {
                let close = if c == b'{' { b'}' } else { b']' };
                if compact.get(i + 1) == Some(&close) {
                    out.extend_from_slice(&[c, close]);
                    i += 2;
                    continue;
                }
                out.push(c);
                depth += 1;
                newline(&mut out, depth);
            }
            b'}' | b']' => {
                depth = depth.saturating_sub(1);
                newline(&mut out, depth);
                out.push(c);
            }
            b',' => {
                out.push(c);
                newline(&mut out, depth);
            }
            b':' => out.extend_from_slice(b": "),
            c if c.is_ascii_whitespace() => {}
            c => out.push(c),
        }
        i += 1;
    }
    out
}

/// The index just past the string starting at `start` (a quote).
fn string_end(b: &[u8], start: usize) -> usize {
    let mut i = start + 1;
    while i < b.len() {
        match b[i] {
            b'\\' => i += 2,
            b'"' => return i + 1,
            _ => i += 1,
        }
    }
    b.len()
}

/// The index just past the JSON value starting at `start`.
fn value_end(b: &[u8], start: usize) -> usize {
    let mut depth = 0usize;
    let mut i = start;
    while i < b.len() {
        match b[i] {
            b'"' => {
                i = string_end(b, i);
                if depth == 0 {
                    return i;
                }
                continue;
            }
            b'{' | b'[' => depth += 1,
            b'}' | b']' if depth > 0 => {
                depth -= 1;
                if depth == 0 {
                    return i + 1;
                }
            }
            b',' | b'}' | b']' if depth == 0 => return i,
            _ => {}
        }
        i += 1;
    }
    b.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indents_like_go_marshal_indent() {
        let compact = br#"{"kind":"ConfigMapList","metadata":{},"items":[{"a":"x,{}:\"y","b":[1,2],"c":[]}]}"#;
        let want = "{\n  \"kind\": \"ConfigMapList\",\n  \"metadata\": {},\n  \"items\": [\n    {\n      \"a\": \"x,{}:\\\"y\",\n      \"b\": [\n        1,\n        2\n      ],\n      \"c\": []\n    }\n  ]\n}";
        assert_eq!(String::from_utf8(indent(compact)).unwrap(), want);
        let with_newline = indent(b"{\"a\":1}\n");
        assert_eq!(with_newline, b"{\n  \"a\": 1\n}");
    }

    #[test]
    fn keeps_fields_v1_compact() {
        let compact =
            br#"{"managedFields":[{"manager":"m","fieldsV1":{"f:data":{".":{},"f:k":{}}}}]}"#;
        let got = String::from_utf8(indent(compact)).unwrap();
        assert!(
            got.contains("\"fieldsV1\": {\"f:data\":{\".\":{},\"f:k\":{}}}\n"),
            "{got}"
        );
    }
}
