//! The one JSON line every scenario prints, with the same fields as cgbench's `emit`.

use serde_json::{Map, Value};

use crate::proc_status::peak_rss_bytes;

/// Prints `fields` plus `impl`, `scenario`, `allocator` and `peak_rss_bytes` as one JSON line.
pub fn emit(scenario: &str, fields: Value) {
    let mut line = match fields {
        Value::Object(map) => map,
        other => Map::from_iter([("value".to_string(), other)]),
    };
    line.insert(
        "impl".into(),
        format!("kcache-{}", env!("CARGO_PKG_VERSION")).into(),
    );
    line.insert("scenario".into(), scenario.into());
    line.insert(
        "allocator".into(),
        crate::heap::Allocator::current().name().into(),
    );
    line.insert("peak_rss_bytes".into(), peak_rss_bytes().into());
    println!("{}", Value::Object(line));
}
