//! The protobuf form of `/openapi/v2` (`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`):
//! the JSON document written as gnostic's `openapi.v2.Document` message (`OpenAPIv2.proto`, the
//! schema client-go's `OpenAPISchema` decodes and kubectl's validation and `explain` read), the
//! way gnostic's compiler turns the JSON into it: every member to its field, `$ref` to `_ref`,
//! `x-` members to `vendor_extension` entries whose value is YAML text (written as JSON, which
//! YAML reads), `default`, `enum` and `example` values the same way, and a parameter to the
//! sub-schema its `in` names. Members the Kubernetes document never holds (`host`, `tags`,
//! `externalDocs`, header and form parameters beyond their common fields, ...) are not written.

use serde_json::{Map, Value};

/// A protobuf message being written.
#[derive(Default)]
struct Msg(Vec<u8>);

impl Msg {
    fn varint(&mut self, mut v: u64) {
        while v >= 0x80 {
            self.0.push((v as u8) | 0x80);
            v >>= 7;
        }
        self.0.push(v as u8);
    }

    fn tag(&mut self, field: u32, wire: u8) {
        self.varint(u64::from(field) << 3 | u64::from(wire));
    }

    fn bytes(&mut self, field: u32, b: &[u8]) {
        self.tag(field, 2);
        self.varint(b.len() as u64);
        self.0.extend_from_slice(b);
    }

    /// A string member (proto3: an empty string is not written).
    fn string(&mut self, field: u32, v: &Value) {
        if let Some(s) = v.as_str().filter(|s| !s.is_empty()) {
            self.bytes(field, s.as_bytes());
        }
    }

    fn strings(&mut self, field: u32, v: &Value) {
        for s in v.as_array().into_iter().flatten() {
            if let Some(s) = s.as_str() {
                self.bytes(field, s.as_bytes());
            }
        }
    }

    fn boolean(&mut self, field: u32, v: &Value) {
        if v.as_bool() == Some(true) {
            self.tag(field, 0);
            self.varint(1);
        }
    }

    fn int(&mut self, field: u32, v: &Value) {
        if let Some(n) = v.as_i64().filter(|n| *n != 0) {
            self.tag(field, 0);
            self.varint(n as u64);
        }
    }

    fn double(&mut self, field: u32, v: &Value) {
        if let Some(n) = v.as_f64().filter(|n| *n != 0.0) {
            self.tag(field, 1);
            self.0.extend_from_slice(&n.to_le_bytes());
        }
    }

    fn message(&mut self, field: u32, m: Msg) {
        self.bytes(field, &m.0);
    }
}

/// gnostic's `Any`: the value as YAML text (`yaml = 2`).
fn any(v: &Value) -> Msg {
    let mut m = Msg::default();
    m.bytes(2, v.to_string().as_bytes());
    m
}

/// A `NamedX` entry: `name = 1`, `value = 2`.
fn named(name: &str, value: Msg) -> Msg {
    let mut m = Msg::default();
    m.bytes(1, name.as_bytes());
    m.message(2, value);
    m
}

/// Every `x-` member as a `NamedAny`, in `field`.
fn vendor_extensions(m: &mut Msg, field: u32, obj: &Map<String, Value>) {
    for (k, v) in obj.iter().filter(|(k, _)| k.starts_with("x-")) {
        m.message(field, named(k, any(v)));
    }
}

fn schema(s: &Value) -> Msg {
    let mut m = Msg::default();
    let Some(o) = s.as_object() else {
        return m;
    };
    m.string(1, &o.get("$ref").cloned().unwrap_or_default());
    for (field, key) in [(2, "format"), (3, "title"), (4, "description")] {
        m.string(field, &s[key]);
    }
    if let Some(d) = o.get("default") {
        m.message(5, any(d));
    }
    m.double(6, &s["multipleOf"]);
    m.double(7, &s["maximum"]);
    m.boolean(8, &s["exclusiveMaximum"]);
    m.double(9, &s["minimum"]);
    m.boolean(10, &s["exclusiveMinimum"]);
    for (field, key) in [(11, "maxLength"), (12, "minLength")] {
        m.int(field, &s[key]);
    }
    m.string(13, &s["pattern"]);
    for (field, key) in [(14, "maxItems"), (15, "minItems")] {
        m.int(field, &s[key]);
    }
    m.boolean(16, &s["uniqueItems"]);
    for (field, key) in [(17, "maxProperties"), (18, "minProperties")] {
        m.int(field, &s[key]);
    }
    m.strings(19, &s["required"]);
    for e in s["enum"].as_array().into_iter().flatten() {
        m.message(20, any(e));
    }
    match o.get("additionalProperties") {
        Some(Value::Bool(b)) => {
            let mut a = Msg::default();
            a.tag(2, 0);
            a.varint(u64::from(*b));
            m.message(21, a);
        }
        Some(a @ Value::Object(_)) => {
            let mut item = Msg::default();
            item.message(1, schema(a));
            m.message(21, item);
        }
        _ => {}
    }
    match o.get("type") {
        Some(t @ Value::String(_)) => {
            let mut item = Msg::default();
            item.string(1, t);
            m.message(22, item);
        }
        Some(t @ Value::Array(_)) => {
            let mut item = Msg::default();
            item.strings(1, t);
            m.message(22, item);
        }
        _ => {}
    }
    match o.get("items") {
        Some(i @ Value::Object(_)) => {
            let mut item = Msg::default();
            item.message(1, schema(i));
            m.message(23, item);
        }
        Some(Value::Array(all)) => {
            let mut item = Msg::default();
            all.iter().for_each(|i| item.message(1, schema(i)));
            m.message(23, item);
        }
        _ => {}
    }
    for a in s["allOf"].as_array().into_iter().flatten() {
        m.message(24, schema(a));
    }
    if let Some(props) = o.get("properties").and_then(Value::as_object) {
        let mut p = Msg::default();
        for (name, s) in props {
            p.message(1, named(name, schema(s)));
        }
        m.message(25, p);
    }
    m.string(26, &s["discriminator"]);
    m.boolean(27, &s["readOnly"]);
    if let Some(e) = o.get("example") {
        m.message(30, any(e));
    }
    vendor_extensions(&mut m, 31, o);
    m
}

/// A parameter (`ParametersItem`): a `$ref`, a body parameter, or the non-body sub-schema its
/// `in` names (header, formData, query, path: their fields are numbered differently).
fn parameter(p: &Value) -> Msg {
    let mut item = Msg::default();
    let Some(o) = p.as_object() else {
        return item;
    };
    if let Some(r) = o.get("$ref") {
        let mut reference = Msg::default();
        reference.string(1, r);
        item.message(2, reference);
        return item;
    }
    let mut param = Msg::default();
    if p["in"] == "body" {
        let mut body = Msg::default();
        body.string(1, &p["description"]);
        body.string(2, &p["name"]);
        body.string(3, &p["in"]);
        body.boolean(4, &p["required"]);
        if let Some(s) = o.get("schema") {
            body.message(5, schema(s));
        }
        vendor_extensions(&mut body, 6, o);
        param.message(1, body);
    } else {
        // (variant in NonBodyParameter, whether the sub-schema has allowEmptyValue at 5)
        let (variant, allow_empty) = match p["in"].as_str() {
            Some("header") => (1, false),
            Some("formData") => (2, true),
            Some("query") => (3, true),
            _ => (4, false),
        };
        let mut sub = Msg::default();
        sub.boolean(1, &p["required"]);
        sub.string(2, &p["in"]);
        sub.string(3, &p["description"]);
        sub.string(4, &p["name"]);
        let shift = u32::from(allow_empty);
        if allow_empty {
            sub.boolean(5, &p["allowEmptyValue"]);
        }
        sub.string(5 + shift, &p["type"]);
        sub.string(6 + shift, &p["format"]);
        sub.string(8 + shift, &p["collectionFormat"]);
        if let Some(d) = o.get("default") {
            sub.message(9 + shift, any(d));
        }
        sub.boolean(19 + shift, &p["uniqueItems"]);
        for e in p["enum"].as_array().into_iter().flatten() {
            sub.message(20 + shift, any(e));
        }
        vendor_extensions(&mut sub, 22 + shift, o);
        let mut non_body = Msg::default();
        non_body.message(variant, sub);
        param.message(2, non_body);
    }
    item.message(1, param);
    item
}

fn operation(op: &Value) -> Msg {
    let mut m = Msg::default();
    m.strings(1, &op["tags"]);
    m.string(2, &op["summary"]);
    m.string(3, &op["description"]);
    m.string(5, &op["operationId"]);
    m.strings(6, &op["produces"]);
    m.strings(7, &op["consumes"]);
    for p in op["parameters"].as_array().into_iter().flatten() {
        m.message(8, parameter(p));
    }
    if let Some(codes) = op["responses"].as_object() {
        let mut responses = Msg::default();
        for (code, r) in codes.iter().filter(|(k, _)| !k.starts_with("x-")) {
            let mut response = Msg::default();
            response.string(1, &r["description"]);
            if let Some(s) = r.get("schema") {
                let mut item = Msg::default();
                item.message(1, schema(s));
                response.message(2, item);
            }
            let mut value = Msg::default();
            value.message(1, response);
            responses.message(1, named(code, value));
        }
        m.message(9, responses);
    }
    m.strings(10, &op["schemes"]);
    m.boolean(11, &op["deprecated"]);
    if let Some(o) = op.as_object() {
        vendor_extensions(&mut m, 13, o);
    }
    m
}

fn path_item(item: &Value) -> Msg {
    let mut m = Msg::default();
    let methods = [
        ("get", 2),
        ("put", 3),
        ("post", 4),
        ("delete", 5),
        ("options", 6),
        ("head", 7),
        ("patch", 8),
    ];
    for (method, field) in methods {
        if let Some(op) = item.get(method) {
            m.message(field, operation(op));
        }
    }
    for p in item["parameters"].as_array().into_iter().flatten() {
        m.message(9, parameter(p));
    }
    m
}

/// The document as gnostic's `openapi.v2.Document`.
pub(crate) fn encode(doc: &Value) -> Vec<u8> {
    let mut m = Msg::default();
    m.string(1, &doc["swagger"]);
    let mut info = Msg::default();
    info.string(1, &doc["info"]["title"]);
    info.string(2, &doc["info"]["version"]);
    m.message(2, info);
    let mut paths = Msg::default();
    for (path, item) in doc["paths"].as_object().into_iter().flatten() {
        paths.message(2, named(path, path_item(item)));
    }
    m.message(8, paths);
    let mut definitions = Msg::default();
    for (name, s) in doc["definitions"].as_object().into_iter().flatten() {
        definitions.message(1, named(name, schema(s)));
    }
    m.message(9, definitions);
    for requirement in doc["security"].as_array().into_iter().flatten() {
        let mut r = Msg::default();
        for (name, scopes) in requirement.as_object().into_iter().flatten() {
            let mut array = Msg::default();
            array.strings(1, scopes);
            r.message(1, named(name, array));
        }
        m.message(12, r);
    }
    if let Some(defs) = doc["securityDefinitions"].as_object() {
        let mut s = Msg::default();
        for (name, d) in defs {
            let mut key = Msg::default();
            for (field, k) in [(1, "type"), (2, "name"), (3, "in"), (4, "description")] {
                key.string(field, &d[k]);
            }
            let mut item = Msg::default();
            item.message(2, key);
            s.message(1, named(name, item));
        }
        m.message(13, s);
    }
    m.0
}
