//! Protobuf request bodies (`Content-Type: application/vnd.kubernetes.protobuf`), which
//! client-go's typed clients send — kubectl's `create namespace|deployment|configmap|...`, `auth
//! can-i --list`, kube-controller-manager — read as the JSON the same client would have sent:
//! the `k8s\0` envelope (a `runtime.Unknown` naming `apiVersion` and `kind`), then the kind's
//! message, decoded with the field tables of Kubernetes 1.20.2's `generated.proto` files
//! (`protobuf-messages.json.gz`, written by `cargo xtask protobuf-schema`). The types with a
//! JSON form of their own read as that form: `Time` and `MicroTime` as RFC 3339, `Duration` as
//! Go's duration, `Quantity` as its string, `IntOrString` as a number or a string,
//! `RawExtension`, `FieldsV1` and a CRD's `JSON` as the JSON they carry, `ExtraValue` and
//! `Verbs` as lists. An empty string is left out, as Go's encoder leaves out an empty
//! `omitempty` string; zero numbers and `false` are kept as sent (the field tables do not say
//! which Go fields are pointers or `omitempty`). Unknown field numbers are skipped, as gogo's
//! decoder skips them.

use std::sync::OnceLock;
use std::time::{Duration, UNIX_EPOCH};

use base64::Engine as _;
use serde_json::{json, Map, Number, Value};

use crate::handlers::meta::rfc3339;

const MESSAGES_GZ: &[u8] =
    include_bytes!("../../testdata/kube-apiserver-1.20.2/protobuf-messages.json.gz");
const MAGIC: &[u8] = b"k8s\0";
const UNKNOWN: &str = "k8s.io.apimachinery.pkg.runtime.Unknown";
const META: &str = "k8s.io.apimachinery.pkg.apis.meta.v1";

/// Whether `body` is a protobuf-encoded object (it starts with the envelope's magic).
pub(crate) fn is_protobuf(body: &[u8]) -> bool {
    body.starts_with(MAGIC)
}

/// `[number, name, type, label]` rows per message.
fn messages() -> &'static Map<String, Value> {
    static M: OnceLock<Map<String, Value>> = OnceLock::new();
    M.get_or_init(|| {
        let doc = crate::handlers::gunzip_json(MESSAGES_GZ, "protobuf-messages.json.gz");
        doc.get("messages")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default()
    })
}

/// The message of `apiVersion`'s `kind`.
fn message_of(api_version: &str, kind: &str) -> Option<String> {
    let (group, version) = api_version.rsplit_once('/').unwrap_or(("", api_version));
    let package = match group {
        "" => format!("k8s.io.api.core.{version}"),
        "meta.k8s.io" => META.to_string(),
        "apiextensions.k8s.io" => {
            format!("k8s.io.apiextensions_apiserver.pkg.apis.apiextensions.{version}")
        }
        "apiregistration.k8s.io" => {
            format!("k8s.io.kube_aggregator.pkg.apis.apiregistration.{version}")
        }
        g => format!("k8s.io.api.{}.{version}", g.split('.').next().unwrap_or(g)),
    };
    let name = format!("{package}.{kind}");
    messages().contains_key(&name).then_some(name)
}

/// One field's wire value.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Bytes(&'a [u8]),
}

fn varint(buf: &mut &[u8]) -> Result<u64, String> {
    let mut v = 0u64;
    for shift in (0..70).step_by(7) {
        let (&b, rest) = buf.split_first().ok_or("a varint runs past the end")?;
        *buf = rest;
        v |= u64::from(b & 0x7f) << shift.min(63);
        if b & 0x80 == 0 {
            return Ok(v);
        }
    }
    Err("a varint is longer than 10 bytes".into())
}

fn take<'a>(buf: &mut &'a [u8], n: usize) -> Result<&'a [u8], String> {
    if buf.len() < n {
        return Err(format!("a field needs {n} bytes, {} are left", buf.len()));
    }
    let (head, rest) = buf.split_at(n);
    *buf = rest;
    Ok(head)
}

/// The fields of a message, in order.
fn fields(mut buf: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, String> {
    let mut out = Vec::new();
    while !buf.is_empty() {
        let key = varint(&mut buf)?;
        let number = u32::try_from(key >> 3).map_err(|_| "a field number is too large")?;
        let wire = match key & 7 {
            0 => Wire::Varint(varint(&mut buf)?),
            1 => Wire::Fixed64(u64::from_le_bytes(
                take(&mut buf, 8)?.try_into().expect("8 bytes"),
            )),
            2 => {
                let len =
                    usize::try_from(varint(&mut buf)?).map_err(|_| "a length is too large")?;
                Wire::Bytes(take(&mut buf, len)?)
            }
            5 => Wire::Fixed32(u32::from_le_bytes(
                take(&mut buf, 4)?.try_into().expect("4 bytes"),
            )),
            w => {
                return Err(format!(
                    "field {number} has wire type {w}, which protobuf 2 bodies do not use"
                ))
            }
        };
        out.push((number, wire));
    }
    Ok(out)
}

/// Go's `time.Duration.String()` of `ns` nanoseconds.
fn go_duration(ns: i64) -> String {
    if ns == 0 {
        return "0s".into();
    }
    let sign = if ns < 0 { "-" } else { "" };
    let u = ns.unsigned_abs();
    let frac = |v: u64, unit: u64| {
        let whole = v / unit;
        let rest = v % unit;
        if rest == 0 {
            whole.to_string()
        } else {
            let digits = unit.to_string().len() - 1;
            let f = format!("{rest:0digits$}");
            format!("{whole}.{}", f.trim_end_matches('0'))
        }
    };
    if u < 1_000 {
        return format!("{sign}{u}ns");
    }
    if u < 1_000_000 {
        return format!("{sign}{}µs", frac(u, 1_000));
    }
    if u < 1_000_000_000 {
        return format!("{sign}{}ms", frac(u, 1_000_000));
    }
    let (h, rest) = (u / 3_600_000_000_000, u % 3_600_000_000_000);
    let (m, s) = (rest / 60_000_000_000, rest % 60_000_000_000);
    let seconds = format!("{}s", frac(s, 1_000_000_000));
    match (h, m) {
        (0, 0) => format!("{sign}{seconds}"),
        (0, m) => format!("{sign}{m}m{seconds}"),
        (h, m) => format!("{sign}{h}h{m}m{seconds}"),
    }
}

fn int_field(buf: &[u8], number: u32) -> Result<i64, String> {
    Ok(fields(buf)?
        .into_iter()
        .find_map(|(n, w)| match (n, w) {
            (n, Wire::Varint(v)) if n == number => Some(v as i64),
            _ => None,
        })
        .unwrap_or(0))
}

fn bytes_field(buf: &[u8], number: u32) -> Result<&[u8], String> {
    Ok(fields(buf)?
        .into_iter()
        .find_map(|(n, w)| match (n, w) {
            (n, Wire::Bytes(b)) if n == number => Some(b),
            _ => None,
        })
        .unwrap_or_default())
}

fn utf8(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| "a string field is not UTF-8".into())
}

/// A message of `name` as JSON, the types with a JSON form of their own included.
fn message(buf: &[u8], name: &str) -> Result<Value, String> {
    match name.rsplit_once('.').map_or(name, |(_, n)| n) {
        "Time" | "MicroTime" if name.starts_with(META) => {
            let secs = u64::try_from(int_field(buf, 1)?).unwrap_or(0);
            let text = rfc3339(UNIX_EPOCH + Duration::from_secs(secs));
            if name.ends_with("MicroTime") {
                let micros = int_field(buf, 2)? / 1_000;
                return Ok(json!(format!(
                    "{}.{micros:06}Z",
                    text.trim_end_matches('Z')
                )));
            }
            return Ok(json!(text));
        }
        "Duration" if name.starts_with(META) => return Ok(json!(go_duration(int_field(buf, 1)?))),
        "Quantity" => return Ok(json!(utf8(bytes_field(buf, 1)?)?)),
        "IntOrString" => {
            return Ok(if int_field(buf, 1)? == 0 {
                json!(int_field(buf, 2)? as i32)
            } else {
                json!(utf8(bytes_field(buf, 3)?)?)
            })
        }
        "RawExtension" | "FieldsV1" | "JSON" => {
            let raw = bytes_field(buf, 1)?;
            return serde_json::from_slice(raw).map_err(|e| format!("{name} holds no JSON: {e}"));
        }
        "ExtraValue" | "Verbs" => {
            let items: Result<Vec<Value>, String> = fields(buf)?
                .into_iter()
                .filter_map(|(n, w)| match (n, w) {
                    (1, Wire::Bytes(b)) => Some(utf8(b).map(Value::String)),
                    _ => None,
                })
                .collect();
            return Ok(Value::Array(items?));
        }
        _ => {}
    }
    let table = messages()
        .get(name)
        .and_then(Value::as_array)
        .ok_or(format!("no protobuf message {name}"))?;
    let mut out = Map::new();
    for (number, wire) in fields(buf)? {
        let Some(row) = table.iter().find(|r| r[0] == number) else {
            continue;
        };
        let (field, ty, label) = (
            row[1].as_str().unwrap_or_default(),
            row[2].as_str().unwrap_or_default(),
            row[3].as_str().unwrap_or_default(),
        );
        match label {
            "m" => {
                let Wire::Bytes(entry) = wire else {
                    return Err(format!("{name}.{field}: a map entry is not a message"));
                };
                let (kt, vt) = ty.split_once(',').unwrap_or((ty, ty));
                let mut key = String::new();
                let mut value = scalar_default(vt);
                for (n, w) in fields(entry)? {
                    match n {
                        1 => {
                            key = value_of(w, kt, &format!("{name}.{field}"))?
                                .as_str()
                                .unwrap_or_default()
                                .to_string()
                        }
                        2 => value = value_of(w, vt, &format!("{name}.{field}"))?,
                        _ => {}
                    }
                }
                let map = out.entry(field).or_insert_with(|| json!({}));
                if let Some(m) = map.as_object_mut() {
                    m.insert(key, value);
                }
            }
            "r" => {
                let v = value_of(wire, ty, &format!("{name}.{field}"))?;
                let list = out.entry(field).or_insert_with(|| json!([]));
                if let Some(l) = list.as_array_mut() {
                    l.push(v);
                }
            }
            _ => {
                let v = value_of(wire, ty, &format!("{name}.{field}"))?;
                if v != json!("") {
                    out.insert(field.to_string(), v);
                }
            }
        }
    }
    Ok(Value::Object(out))
}

/// A map value's default when the entry leaves it out.
fn scalar_default(ty: &str) -> Value {
    match ty {
        "string" | "bytes" => json!(""),
        "bool" => json!(false),
        "int32" | "int64" | "uint64" | "double" | "float" => json!(0),
        _ => json!({}),
    }
}

/// A field's value of type `ty`.
fn value_of(wire: Wire<'_>, ty: &str, at: &str) -> Result<Value, String> {
    Ok(match (ty, wire) {
        ("string", Wire::Bytes(b)) => json!(utf8(b)?),
        ("bytes", Wire::Bytes(b)) => json!(base64::engine::general_purpose::STANDARD.encode(b)),
        ("bool", Wire::Varint(v)) => json!(v != 0),
        ("int32", Wire::Varint(v)) => json!(v as i32),
        ("int64", Wire::Varint(v)) => json!(v as i64),
        ("uint64", Wire::Varint(v)) => json!(v),
        ("double", Wire::Fixed64(v)) => {
            Number::from_f64(f64::from_bits(v)).map_or(Value::Null, Value::Number)
        }
        ("float", Wire::Fixed32(v)) => {
            Number::from_f64(f64::from(f32::from_bits(v))).map_or(Value::Null, Value::Number)
        }
        (t, Wire::Bytes(b)) if t.contains('.') => message(b, t)?,
        _ => return Err(format!("{at}: the wire type does not fit {ty}")),
    })
}

/// The object a protobuf body holds, as JSON with its `apiVersion` and `kind`.
pub(crate) fn to_json(body: &[u8]) -> Result<Value, String> {
    let envelope = body.strip_prefix(MAGIC).ok_or("no protobuf envelope")?;
    let unknown = message(envelope, UNKNOWN)?;
    let api_version = unknown["typeMeta"]["apiVersion"]
        .as_str()
        .unwrap_or_default();
    let kind = unknown["typeMeta"]["kind"].as_str().unwrap_or_default();
    let name = message_of(api_version, kind).ok_or(format!(
        "no protobuf message is known for {api_version:?} {kind:?}"
    ))?;
    let raw = unknown["raw"].as_str().unwrap_or_default();
    let raw = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .map_err(|e| e.to_string())?;
    let mut obj = message(&raw, &name)?;
    if let Some(o) = obj.as_object_mut() {
        o.insert("apiVersion".into(), json!(api_version));
        o.insert("kind".into(), json!(kind));
    }
    Ok(obj)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A length-delimited field.
    fn field(number: u8, bytes: &[u8]) -> Vec<u8> {
        let mut out = vec![number << 3 | 2, u8::try_from(bytes.len()).unwrap()];
        out.extend_from_slice(bytes);
        out
    }

    fn entry(k: &str, v: &str) -> Vec<u8> {
        [field(1, k.as_bytes()), field(2, v.as_bytes())].concat()
    }

    #[test]
    fn a_config_map_reads_as_its_json() {
        // ObjectMeta: name (1), generateName "" (2), creationTimestamp Time{seconds} (8), labels (11)
        let time = [vec![1 << 3, 0x80, 0x94, 0xeb, 0xdc, 0x03]].concat(); // seconds = 1_000_000_000
        let meta = [
            field(1, b"cfg"),
            field(2, b""),
            field(8, &time),
            field(11, &entry("app", "web")),
        ]
        .concat();
        let cm = [field(1, &meta), field(2, &entry("a", "b")), vec![4 << 3, 1]].concat();
        let type_meta = [field(1, b"v1"), field(2, b"ConfigMap")].concat();
        let unknown = [field(1, &type_meta), field(2, &cm)].concat();
        let body = [MAGIC, &unknown[..]].concat();
        assert!(is_protobuf(&body));
        assert_eq!(
            to_json(&body).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "immutable": true, "data": {"a": "b"},
                   "metadata": {"name": "cfg", "labels": {"app": "web"},
                                "creationTimestamp": "2001-09-09T01:46:40Z"}})
        );
        let unknown_kind = [
            field(1, &[field(1, b"v1"), field(2, b"Nope")].concat()),
            field(2, b""),
        ]
        .concat();
        let err = to_json(&[MAGIC, &unknown_kind[..]].concat()).unwrap_err();
        assert!(err.contains("\"Nope\""), "{err}");
        assert!(
            to_json(&[MAGIC, &[0x0a, 0x05][..]].concat()).is_err(),
            "a truncated body"
        );
    }

    #[test]
    fn durations_read_as_go_prints_them() {
        assert_eq!(go_duration(0), "0s");
        assert_eq!(go_duration(1_500_000_000), "1.5s");
        assert_eq!(go_duration(3_600_000_000_000), "1h0m0s");
        assert_eq!(go_duration(90_000_000_000), "1m30s");
        assert_eq!(go_duration(2_000_000), "2ms");
        assert_eq!(go_duration(-1_000), "-1µs");
    }
}
