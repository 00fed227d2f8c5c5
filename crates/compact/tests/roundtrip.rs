//! Property: any JSON value survives CompactValue losslessly (as serde_json::Value sees it).

use kcache_compact::CompactValue;
use proptest::prelude::*;
use serde_json::Value;

fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "\\PC{0,6}".prop_map(Value::String),
        prop::sample::select(vec!["a", "b", "app"]).prop_map(Value::from),
    ];
    leaf.prop_recursive(4, 64, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-c]{0,2}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    #[test]
    fn any_json_round_trips(v in json()) {
        let c = CompactValue::from(&v);
        prop_assert_eq!(Value::from(&c), v.clone());
        // The serde Deserializer over the tree builds what the JSON would.
        prop_assert_eq!(serde::Deserialize::deserialize(&c).ok(), Some(v.clone()));
        let text = serde_json::to_string(&v).unwrap();
        prop_assert_eq!(serde_json::to_string(&c).unwrap(), text.clone());
        let decoded: CompactValue = serde_json::from_str(&text).unwrap();
        let via_value = CompactValue::from(&serde_json::from_str::<Value>(&text).unwrap());
        prop_assert_eq!(&decoded, &via_value);
        // Equal values are one allocation: decoding twice gives the same pointers.
        let again: CompactValue = serde_json::from_str(&text).unwrap();
        let shared = match (&decoded, &again) {
            (CompactValue::Array(a), CompactValue::Array(b)) => std::sync::Arc::ptr_eq(a, b),
            (CompactValue::Object(a), CompactValue::Object(b)) => std::sync::Arc::ptr_eq(a, b),
            (CompactValue::String(a), CompactValue::String(b)) => std::sync::Arc::ptr_eq(a, b),
            (a, b) => a == b,
        };
        prop_assert!(shared);
    }
}
