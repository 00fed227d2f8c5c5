//! Table tests from the Kubernetes label-selector grammar (apimachinery `labels/selector_test.go`
//! TestSelectorParse, TestSelectorMatches, TestLexer) and field selectors.

use std::collections::BTreeMap;

use kcache_core::selector::{FieldSelector, LabelSelector};
use kcache_core::DynamicObject;

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn parses_valid_selectors_to_canonical_form() {
    let cases = [
        ("", ""),
        ("x=a", "x=a"),
        ("x==a", "x==a"),
        ("x=a,y!=b", "x=a,y!=b"),
        ("y!=b,x=a", "x=a,y!=b"),
        ("x=a,y=b,z=c", "x=a,y=b,z=c"),
        ("x in (a,b)", "x in (a,b)"),
        ("x in (b,a)", "x in (a,b)"),
        ("x notin (a)", "x notin (a)"),
        ("x", "x"),
        ("!x", "!x"),
        ("x>1", "x>1"),
        ("x<1", "x<1"),
        ("x=", "x="),
        ("x= ", "x="),
        ("x=,z= ", "x=,z="),
        ("x in ()", "x in ()"),
        (" x in ( a , b ) , !y ", "x in (a,b),!y"),
        ("example.com/app=web", "example.com/app=web"),
        ("a.b-c_d=e.f-g_h", "a.b-c_d=e.f-g_h"),
    ];
    for (input, want) in cases {
        let s = LabelSelector::parse(input).unwrap_or_else(|e| panic!("{input:?}: {e}"));
        assert_eq!(s.to_string(), want, "input {input:?}");
    }
}

#[test]
fn rejects_invalid_selectors_with_clear_errors() {
    let cases = [
        ("x=a||y=b", "must consist of"),
        ("x==a==b", "expected ',' or end"),
        ("!x=a", "expected ',' or end"),
        ("x<a", "must be an integer"),
        ("x in a", "expected '('"),
        ("x in (a", "unclosed value set"),
        ("x notin (a b)", "expected ',' or ')'"),
        ("=a", "expected a key"),
        ("x=a,", "expected a key"),
        ("-x=a", "start and end alphanumeric"),
        ("x=-a", "start and end alphanumeric"),
        ("Example.com/x=a", "lowercase DNS subdomain"),
        ("/x=a", "prefix"),
        (
            "x=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
            "63 characters",
        ),
        ("x(", "expected one of"),
    ];
    for (input, fragment) in cases {
        let err = LabelSelector::parse(input).expect_err(input).to_string();
        assert!(
            err.contains(fragment),
            "{input:?}: {err:?} lacks {fragment:?}"
        );
        assert!(err.contains("invalid label selector"), "{err}");
    }
}

#[test]
fn matches_like_kubernetes() {
    let l = labels(&[("x", "a"), ("y", "b"), ("n", "5")]);
    let yes = [
        "",
        "x=a",
        "x==a",
        "x!=b",
        "z!=a",
        "x in (a,c)",
        "z notin (a)",
        "x notin (c)",
        "x",
        "!z",
        "n>4",
        "n<6",
        "x=a,y=b",
    ];
    let no = [
        "x=b",
        "x!=a",
        "x in (b)",
        "x notin (a)",
        "z",
        "!x",
        "n>5",
        "n<5",
        "x=a,y=c",
        "x>1",
        "z=",
        "z in (a)",
    ];
    for s in yes {
        assert!(
            LabelSelector::parse(s).unwrap().matches(Some(&l)),
            "{s} should match"
        );
    }
    for s in no {
        assert!(
            !LabelSelector::parse(s).unwrap().matches(Some(&l)),
            "{s} should not match"
        );
    }
    assert!(LabelSelector::parse("!x").unwrap().matches(None));
    assert!(LabelSelector::parse("x!=a").unwrap().matches(None));
    assert!(!LabelSelector::parse("x").unwrap().matches(None));
    let obj = DynamicObject::new("o").with_label("app", "web");
    assert!(LabelSelector::parse("app in (web)")
        .unwrap()
        .matches_object(&obj));
}

#[test]
fn field_selectors() {
    let obj = DynamicObject::new("a").within("ns");
    let m = |s: &str| FieldSelector::parse(s).unwrap().matches_object(&obj);
    assert!(m(""));
    assert!(m("metadata.name=a"));
    assert!(m("metadata.name==a,metadata.namespace=ns"));
    assert!(m("metadata.namespace!=other"));
    assert!(!m("metadata.name=b"));
    assert!(!m("spec.nodeName=n1"));
    let s = FieldSelector::parse(r"spec.nodeName=a\,b").unwrap();
    assert_eq!(s.requirements()[0].value, "a,b");
    assert_eq!(s.to_string(), r"spec.nodeName=a\,b");
    assert!(s.matches_with(|f| (f == "spec.nodeName").then_some("a,b")));
    for bad in ["metadata.name", "=a", "a=b=c", r"a=b\q", "a=b,,c=d"] {
        let e = FieldSelector::parse(bad).expect_err(bad).to_string();
        assert!(e.contains("invalid field selector"), "{e}");
    }
}
