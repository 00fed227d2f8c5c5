//! The protobuf and JSON decoders held to each other on generated objects: a ConfigMap is
//! written both ways — protobuf through kcache-codec's `ObjectMeta` table and `ConfigMap`'s
//! fields, JSON as the API server writes it (Go's `omitempty` rules) — and the protobuf item,
//! decoded as JSON, as k8s-openapi's `ConfigMap` and as kcache-core's `PartialObjectMeta`, must
//! equal what the JSON decodes to. kube-apiserver's own lists are compared in `protobuf_list`.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_codec::{MetaKind, OBJECT_META};
use kcache_core::PartialObjectMeta;
use proptest::prelude::*;
use serde_json::{json, Map, Value};

use super::protobuf_kinds::ItemKind;

fn varint(mut v: u64, out: &mut Vec<u8>) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

fn bytes_field(number: u32, body: &[u8], out: &mut Vec<u8>) {
    varint(u64::from(number) << 3 | 2, out);
    varint(body.len() as u64, out);
    out.extend_from_slice(body);
}

fn varint_field(number: u32, v: u64, out: &mut Vec<u8>) {
    varint(u64::from(number) << 3, out);
    varint(v, out);
}

fn entry(key: &str, value: &[u8]) -> Vec<u8> {
    let mut e = Vec::new();
    bytes_field(1, key.as_bytes(), &mut e);
    bytes_field(2, value, &mut e);
    e
}

/// One generated object: its metadata members (by JSON key) and its ConfigMap fields.
#[derive(Debug, Clone)]
struct Generated {
    strings: BTreeMap<&'static str, String>,
    times: BTreeMap<&'static str, i64>,
    ints: BTreeMap<&'static str, i64>,
    labels: BTreeMap<String, String>,
    annotations: BTreeMap<String, String>,
    finalizers: Vec<String>,
    owners: Vec<(String, String, String, String, Option<bool>)>,
    managers: Vec<(String, i64, String)>,
    data: BTreeMap<String, String>,
    binary: BTreeMap<String, Vec<u8>>,
    immutable: Option<bool>,
}

/// RFC 3339 of `seconds`, as the server writes `metav1.Time`.
fn rfc3339(seconds: i64) -> String {
    jiff::Timestamp::from_second(seconds)
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string()
}

impl Generated {
    fn protobuf(&self) -> Vec<u8> {
        let mut meta = Vec::new();
        for m in &OBJECT_META {
            match m.kind {
                MetaKind::String => {
                    if let Some(s) = self.strings.get(m.name) {
                        bytes_field(m.proto, s.as_bytes(), &mut meta);
                    }
                }
                MetaKind::Time => {
                    if let Some(t) = self.times.get(m.name) {
                        let mut time = Vec::new();
                        varint_field(1, *t as u64, &mut time);
                        bytes_field(m.proto, &time, &mut meta);
                    }
                }
                MetaKind::Int { .. } => {
                    if let Some(i) = self.ints.get(m.name) {
                        varint_field(m.proto, *i as u64, &mut meta);
                    }
                }
                MetaKind::StringMap => {
                    let map = if m.name == "labels" {
                        &self.labels
                    } else {
                        &self.annotations
                    };
                    for (k, v) in map {
                        bytes_field(m.proto, &entry(k, v.as_bytes()), &mut meta);
                    }
                }
                MetaKind::Strings => {
                    for f in &self.finalizers {
                        bytes_field(m.proto, f.as_bytes(), &mut meta);
                    }
                }
                MetaKind::OwnerReferences => {
                    for (api_version, kind, name, uid, controller) in &self.owners {
                        let mut o = Vec::new();
                        bytes_field(1, kind.as_bytes(), &mut o);
                        bytes_field(3, name.as_bytes(), &mut o);
                        bytes_field(4, uid.as_bytes(), &mut o);
                        bytes_field(5, api_version.as_bytes(), &mut o);
                        if let Some(c) = controller {
                            varint_field(6, u64::from(*c), &mut o);
                        }
                        bytes_field(m.proto, &o, &mut meta);
                    }
                }
                MetaKind::ManagedFields => {
                    for (manager, time, fields) in &self.managers {
                        let mut e = Vec::new();
                        bytes_field(1, manager.as_bytes(), &mut e);
                        let mut t = Vec::new();
                        varint_field(1, *time as u64, &mut t);
                        bytes_field(4, &t, &mut e);
                        let mut raw = Vec::new();
                        bytes_field(1, fields.as_bytes(), &mut raw);
                        bytes_field(7, &raw, &mut e);
                        bytes_field(m.proto, &e, &mut meta);
                    }
                }
            }
        }
        let mut item = Vec::new();
        bytes_field(1, &meta, &mut item);
        for (k, v) in &self.data {
            bytes_field(2, &entry(k, v.as_bytes()), &mut item);
        }
        for (k, v) in &self.binary {
            bytes_field(3, &entry(k, v), &mut item);
        }
        if let Some(b) = self.immutable {
            varint_field(4, u64::from(b), &mut item);
        }
        item
    }

    /// The JSON the API server writes for the same object.
    fn json(&self) -> Value {
        use base64::Engine as _;
        let mut meta = Map::new();
        for (k, v) in &self.strings {
            if !v.is_empty() {
                meta.insert((*k).into(), json!(v));
            }
        }
        for (k, t) in &self.times {
            if *t != 0 {
                meta.insert((*k).into(), json!(rfc3339(*t)));
            }
        }
        for (k, i) in &self.ints {
            if *k != "generation" || *i != 0 {
                meta.insert((*k).into(), json!(i));
            }
        }
        if !self.labels.is_empty() {
            meta.insert("labels".into(), json!(self.labels));
        }
        if !self.annotations.is_empty() {
            meta.insert("annotations".into(), json!(self.annotations));
        }
        if !self.finalizers.is_empty() {
            meta.insert("finalizers".into(), json!(self.finalizers));
        }
        if !self.owners.is_empty() {
            let owners: Vec<Value> = self
                .owners
                .iter()
                .map(|(api_version, kind, name, uid, controller)| {
                    let mut o =
                        json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid});
                    if let Some(c) = controller {
                        o["controller"] = json!(c);
                    }
                    o
                })
                .collect();
            meta.insert("ownerReferences".into(), Value::Array(owners));
        }
        if !self.managers.is_empty() {
            let managers: Vec<Value> = self
                .managers
                .iter()
                .map(|(manager, time, fields)| {
                    let mut e = Map::new();
                    if !manager.is_empty() {
                        e.insert("manager".into(), json!(manager));
                    }
                    if *time != 0 {
                        e.insert("time".into(), json!(rfc3339(*time)));
                    }
                    e.insert("fieldsV1".into(), serde_json::from_str(fields).unwrap());
                    Value::Object(e)
                })
                .collect();
            meta.insert("managedFields".into(), Value::Array(managers));
        }
        let mut cm = json!({ "metadata": meta });
        if !self.data.is_empty() {
            cm["data"] = json!(self.data);
        }
        if !self.binary.is_empty() {
            let b64 = base64::engine::general_purpose::STANDARD;
            let binary: BTreeMap<_, _> = self
                .binary
                .iter()
                .map(|(k, v)| (k, b64.encode(v)))
                .collect();
            cm["binaryData"] = json!(binary);
        }
        if let Some(b) = self.immutable {
            cm["immutable"] = json!(b);
        }
        cm
    }
}

fn text() -> impl Strategy<Value = String> {
    "[a-z0-9./é-]{0,12}"
}

fn map() -> impl Strategy<Value = BTreeMap<String, String>> {
    proptest::collection::btree_map("[a-z][a-z0-9./-]{0,8}", text(), 0..4)
}

fn generated() -> impl Strategy<Value = Generated> {
    let strings = proptest::collection::btree_map(
        prop_oneof![
            Just("name"),
            Just("generateName"),
            Just("namespace"),
            Just("selfLink"),
            Just("uid"),
            Just("resourceVersion"),
            Just("clusterName"),
        ],
        text(),
        0..7,
    );
    let times = proptest::collection::btree_map(
        prop_oneof![Just("creationTimestamp"), Just("deletionTimestamp")],
        1i64..4_000_000_000,
        0..2,
    );
    let ints = proptest::collection::btree_map(
        prop_oneof![Just("generation"), Just("deletionGracePeriodSeconds")],
        0i64..1_000,
        0..2,
    );
    let owners = proptest::collection::vec(
        (
            "v1|apps/v1",
            "[A-Z][a-z]{0,6}",
            text(),
            text(),
            any::<Option<bool>>(),
        ),
        0..3,
    );
    let managers = proptest::collection::vec(
        (
            text(),
            1i64..4_000_000_000,
            prop_oneof![
                Just("{}".to_string()),
                Just(r#"{"f:data":{".":{},"f:k":{}}}"#.to_string()),
                Just(r#"{"f:metadata":{"f:labels":{"f:app":{}}}}"#.to_string()),
            ],
        ),
        0..3,
    );
    let binary = proptest::collection::btree_map(
        "[a-z]{1,6}",
        proptest::collection::vec(any::<u8>(), 0..8),
        0..3,
    );
    (
        (strings, times, ints, map(), map()),
        (
            proptest::collection::vec(text(), 0..3),
            owners,
            managers,
            map(),
            binary,
            any::<Option<bool>>(),
        ),
    )
        .prop_map(
            |(
                (strings, times, ints, labels, annotations),
                (finalizers, owners, managers, data, binary, immutable),
            )| Generated {
                strings,
                times,
                ints,
                labels,
                annotations,
                finalizers,
                owners,
                managers,
                data,
                binary,
                immutable,
            },
        )
}

proptest! {
    #[test]
    fn protobuf_and_json_decode_to_the_same_object(g in generated()) {
        let item = g.protobuf();
        let json = g.json();
        let as_json: Value = ItemKind::ConfigMap.decoder()(0, &item).unwrap();
        prop_assert_eq!(&as_json, &json);
        let typed: ConfigMap = ItemKind::ConfigMap.decoder()(0, &item).unwrap();
        prop_assert_eq!(typed, serde_json::from_value::<ConfigMap>(json.clone()).unwrap());
        let meta: PartialObjectMeta = ItemKind::ConfigMap.decoder()(0, &item).unwrap();
        let from_json: PartialObjectMeta = serde_json::from_value(json).unwrap();
        prop_assert_eq!(meta.metadata, from_json.metadata);
    }
}
