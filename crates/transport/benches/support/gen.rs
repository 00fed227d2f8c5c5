//! Generated list and watch bodies of ConfigMaps: about 300 bytes of data each, metadata like
//! the API server's (uid, resourceVersion, creationTimestamp, labels, managedFields).

use std::fmt::Write as _;

/// One ConfigMap's JSON.
pub fn configmap(i: usize, out: &mut String) {
    let data: String = (0..300)
        .map(|k| char::from(b'a' + ((i + k) % 26) as u8))
        .collect();
    let _ = write!(
        out,
        r#"{{"kind":"ConfigMap","apiVersion":"v1","metadata":{{"name":"cm-{i}","namespace":"ns-{ns}","uid":"6f1e{i:08x}-1c2d-4e5f-8a9b-0c1d2e3f{i:04x}","resourceVersion":"{rv}","creationTimestamp":"2026-01-02T03:04:05Z","labels":{{"app":"app-{app}"}},"managedFields":[{{"manager":"kubectl","operation":"Update","apiVersion":"v1","time":"2026-01-02T03:04:05Z","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{".":{{}},"f:key":{{}}}}}}}}]}},"data":{{"key":"{data}"}}}}"#,
        ns = i % 100,
        rv = 1000 + i,
        app = i % 1000,
    );
}

/// A watch body of `n` events (ADDED, MODIFIED, DELETED in turn), one per line.
pub fn watch_stream(n: usize) -> Vec<u8> {
    let mut s = String::with_capacity(n * 800);
    for i in 0..n {
        let ty = ["ADDED", "MODIFIED", "DELETED"][i % 3];
        let _ = write!(s, r#"{{"type":"{ty}","object":"#);
        configmap(i, &mut s);
        s.push_str("}\n");
    }
    s.into_bytes()
}

/// A list body of `n` ConfigMaps, produced lazily in chunks of about `chunk` bytes, as the
/// network would deliver it.
pub fn list_chunks(n: usize, chunk: usize) -> impl Iterator<Item = Vec<u8>> {
    let mut i = 0;
    let mut started = false;
    let mut done = false;
    std::iter::from_fn(move || {
        if done {
            return None;
        }
        let mut s = String::with_capacity(chunk + 1024);
        if !started {
            s.push_str(r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"123456"},"items":["#);
            started = true;
        }
        while s.len() < chunk && i < n {
            if i > 0 {
                s.push(',');
            }
            configmap(i, &mut s);
            i += 1;
        }
        if i == n {
            s.push_str("]}");
            done = true;
        }
        Some(s.into_bytes())
    })
}

/// The same list body in one buffer.
pub fn list_body(n: usize) -> Vec<u8> {
    list_chunks(n, 1 << 20).flatten().collect()
}
