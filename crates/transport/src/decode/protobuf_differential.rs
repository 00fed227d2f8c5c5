//! The protobuf and JSON decoders held to each other on generated objects: a ConfigMap is
//! written both ways — protobuf through kcache-codec's `ObjectMeta` table and `ConfigMap`'s
//! fields, JSON as the API server writes it (Go's `omitempty` rules) — and the protobuf item,
//! decoded as every type a list decodes into (JSON, k8s-openapi's `ConfigMap`, kcache-core's
//! `PartialObjectMeta` and `DynamicObject`, kcache-compact's `Compact<ConfigMap>`), must equal
//! what the JSON decodes to. kube-apiserver's own lists are compared in `protobuf_list`.
//!
//! The same objects with a field the decoder does not know (a field added to `ObjectMeta` or to
//! `ConfigMap` after kcache, which the server's JSON names): every target type refuses the
//! protobuf item with the error `Api::list` reads the page again in JSON on, and what the JSON
//! then gives differs from the object without the field for every reader that keeps members,
//! so no skipping could have matched it.

use std::collections::BTreeMap;

use k8s_openapi::api::core::v1::ConfigMap;
use kcache_codec::{MetaKind, OBJECT_META};
use kcache_compact::Compact;
use kcache_core::{DynamicObject, Error, PartialObjectMeta};
use proptest::prelude::*;
use serde::de::DeserializeOwned;
use serde_json::{json, Map, Value};

use super::protobuf::is_unknown_field;
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
        self.protobuf_with(&[], &[])
    }

    /// The ConfigMap message, `meta_extra` appended to its metadata and `extra` to it.
    fn protobuf_with(&self, meta_extra: &[u8], extra: &[u8]) -> Vec<u8> {
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
        meta.extend_from_slice(meta_extra);
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
        item.extend_from_slice(extra);
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

/// A field the decoder does not know: in `ObjectMeta` or in `ConfigMap`, its number, and the
/// JSON member the server writes for it.
#[derive(Debug, Clone)]
struct Unknown {
    in_metadata: bool,
    number: u32,
    member: String,
    value: String,
}

impl Unknown {
    /// `g`'s ConfigMap message with the field added to it or to its metadata.
    fn protobuf(&self, g: &Generated) -> Vec<u8> {
        let mut field = Vec::new();
        bytes_field(self.number, self.value.as_bytes(), &mut field);
        if self.in_metadata {
            g.protobuf_with(&field, &[])
        } else {
            g.protobuf_with(&[], &field)
        }
    }

    /// `json` with the member added where the field is.
    fn json(&self, mut json: Value) -> Value {
        let object = if self.in_metadata {
            &mut json["metadata"]
        } else {
            &mut json
        };
        object[self.member.as_str()] = json!(self.value);
        json
    }
}

fn unknown() -> impl Strategy<Value = Unknown> {
    // ObjectMeta's numbers the table does not have (16 was `initializers`), ConfigMap's past 4.
    let metadata = prop_oneof![Just(16u32), 18u32..40].prop_map(|n| (true, n));
    let config_map = (5u32..40).prop_map(|n| (false, n));
    (prop_oneof![metadata, config_map], "x[a-z]{0,8}", text()).prop_map(
        |((in_metadata, number), member, value)| Unknown {
            in_metadata,
            number,
            member,
            value,
        },
    )
}

/// `item` decoded as `T` from protobuf: the unknown-field error `Api::list` reads the page again
/// in JSON on.
fn refused<T: DeserializeOwned>(item: &[u8]) -> Result<(), TestCaseError> {
    let decoded: Result<T, Error> = ItemKind::ConfigMap.decoder()(0, item);
    match decoded {
        Err(e) if is_unknown_field(&e) => Ok(()),
        Err(e) => Err(TestCaseError::fail(format!(
            "not an unknown-field error: {e}"
        ))),
        Ok(_) => Err(TestCaseError::fail("an unknown field was decoded")),
    }
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
        let from_json: PartialObjectMeta = serde_json::from_value(json.clone()).unwrap();
        prop_assert_eq!(meta.metadata, from_json.metadata);
        let dynamic: DynamicObject = ItemKind::ConfigMap.decoder()(0, &item).unwrap();
        prop_assert_eq!(dynamic, serde_json::from_value::<DynamicObject>(json.clone()).unwrap());
        let compact: Compact<ConfigMap> = ItemKind::ConfigMap.decoder()(0, &item).unwrap();
        prop_assert_eq!(compact, serde_json::from_value::<Compact<ConfigMap>>(json).unwrap());
    }

    #[test]
    fn a_field_the_decoder_does_not_know_is_left_to_json(g in generated(), u in unknown()) {
        let item = u.protobuf(&g);
        let (without, with) = (g.json(), u.json(g.json()));
        refused::<Value>(&item)?;
        refused::<ConfigMap>(&item)?;
        refused::<PartialObjectMeta>(&item)?;
        refused::<DynamicObject>(&item)?;
        refused::<Compact<ConfigMap>>(&item)?;
        // What JSON gives instead: the member, for every reader that keeps members.
        prop_assert_ne!(&without, &with);
        let dynamic = |j: &Value| serde_json::from_value::<DynamicObject>(j.clone()).unwrap();
        prop_assert_ne!(dynamic(&without), dynamic(&with));
        let compact = |j: &Value| serde_json::from_value::<Compact<ConfigMap>>(j.clone()).unwrap();
        prop_assert_ne!(compact(&without), compact(&with));
        let meta = |j: &Value| serde_json::from_value::<PartialObjectMeta>(j.clone()).unwrap();
        prop_assert_eq!(meta(&without) != meta(&with), u.in_metadata);
        // k8s-openapi's types drop it.
        let typed = |j: &Value| serde_json::from_value::<ConfigMap>(j.clone()).unwrap();
        prop_assert_eq!(typed(&without), typed(&with));
    }
}
