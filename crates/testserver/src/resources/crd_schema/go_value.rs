//! Values printed as the real server's Go code prints them in field errors (`%v`, `%q`, `%#v`),
//! so our messages match kube-apiserver's byte for byte.

use serde_json::Value;

use crate::http::query::go_quote;

/// A float as Go's `%v` prints a `float64`: shortest form, exponent from 1e21 up or below 1e-4.
pub(super) fn float(f: f64) -> String {
    if f == 0.0 || f.is_nan() || f.is_infinite() {
        return match f {
            x if x.is_nan() => "NaN".into(),
            x if x == f64::INFINITY => "+Inf".into(),
            x if x == f64::NEG_INFINITY => "-Inf".into(),
            _ => "0".into(),
        };
    }
    let exp = f.abs().log10().floor() as i32;
    if !(-4..21).contains(&exp) {
        // Rust's `{:e}` is `1e30`; Go's is `1e+30` (at least two exponent digits).
        let s = format!("{f:e}");
        let (mantissa, e) = s.split_once('e').unwrap_or((&s, "0"));
        let (sign, digits) = match e.strip_prefix('-') {
            Some(d) => ('-', d),
            None => ('+', e),
        };
        return format!("{mantissa}e{sign}{digits:0>2}");
    }
    format!("{f}")
}

/// A JSON number as Go holds it after decoding (int64 when integral, else float64), `%v`.
pub(super) fn number(n: &serde_json::Number) -> String {
    match (n.as_i64(), n.as_u64()) {
        (Some(i), _) => i.to_string(),
        (_, Some(u)) => u.to_string(),
        _ => float(n.as_f64().unwrap_or_default()),
    }
}

/// A field error's bad value as `field.Error` prints it: `%q` for strings, `%v` for numbers
/// and booleans, `%#v` for the rest.
pub(super) fn bad_value(v: &Value) -> String {
    match v {
        Value::String(s) => go_quote(s),
        Value::Number(n) => number(n),
        Value::Bool(b) => b.to_string(),
        Value::Null => "null".into(),
        other => go_syntax(other),
    }
}

/// Go's `%#v` of a decoded JSON value (`map[string]interface {}{"k":"a"}`).
pub(super) fn go_syntax(v: &Value) -> String {
    match v {
        Value::Null => "interface {}(nil)".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => go_quote(s),
        Value::Array(items) => format!(
            "[]interface {{}}{{{}}}",
            items.iter().map(go_syntax).collect::<Vec<_>>().join(", ")
        ),
        Value::Object(m) => format!(
            "map[string]interface {{}}{{{}}}",
            m.iter()
                .map(|(k, v)| format!("{}:{}", go_quote(k), go_syntax(v)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// Go's `%v` of a decoded JSON value (`x`, `1.5`, `[]`, `map[a:1]`).
pub(super) fn plain(v: &Value) -> String {
    match v {
        Value::Null => "<nil>".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => number(n),
        Value::String(s) => s.clone(),
        Value::Array(items) => format!(
            "[{}]",
            items.iter().map(plain).collect::<Vec<_>>().join(" ")
        ),
        Value::Object(m) => format!(
            "map[{}]",
            m.iter()
                .map(|(k, v)| format!("{k}:{}", plain(v)))
                .collect::<Vec<_>>()
                .join(" ")
        ),
    }
}

/// Go's `%T` of a decoded JSON value.
pub(super) fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "<nil>",
        Value::Bool(_) => "bool",
        Value::Number(n) if n.is_f64() => "float64",
        Value::Number(_) => "int64",
        Value::String(_) => "string",
        Value::Array(_) => "[]interface {}",
        Value::Object(_) => "map[string]interface {}",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn floats_print_as_go_prints_them() {
        assert_eq!(float(1.0), "1");
        assert_eq!(float(0.5), "0.5");
        assert_eq!(float(2.5), "2.5");
        assert_eq!(float(1e30), "1e+30");
        assert_eq!(float(1e20), "100000000000000000000");
        assert_eq!(float(0.00001), "1e-05");
    }

    #[test]
    fn values_print_as_field_errors_print_them() {
        assert_eq!(bad_value(&json!("a\"b")), "\"a\\\"b\"");
        assert_eq!(bad_value(&json!(0)), "0");
        assert_eq!(bad_value(&json!(1.5)), "1.5");
        assert_eq!(
            go_syntax(&json!({"k": "a", "n": 1})),
            "map[string]interface {}{\"k\":\"a\", \"n\":1}"
        );
        assert_eq!(plain(&json!([])), "[]");
        assert_eq!(type_name(&json!([])), "[]interface {}");
    }
}
