//! KEP-5866 `shardSelector`: the FNV-1a 64 hash, the `shardRange` grammar and matching.

use kcache_core::selector::{fnv1a64, fnv1a64_continue, ShardField, ShardRange, ShardSelector};
use kcache_core::DynamicObject;

const UID: &str = "3f1c7d2e-8a5b-4c6d-9e0f-1a2b3c4d5e6f";

fn with_uid(name: &str, uid: &str) -> DynamicObject {
    let mut o = DynamicObject::new(name).within("default");
    o.metadata.uid = Some(uid.to_string());
    o
}

#[test]
fn fnv1a64_matches_the_reference_vectors() {
    // The FNV reference test suite (fnv1a64 of "", "a", "foobar"), plus pinned field values.
    assert_eq!(fnv1a64(b""), 0xcbf2_9ce4_8422_2325);
    assert_eq!(fnv1a64(b"a"), 0xaf63_dc4c_8601_ec8c);
    assert_eq!(fnv1a64(b"foobar"), 0x8594_4171_f739_67e8);
    assert_eq!(fnv1a64(b"default"), 0xebad_a516_8620_c5fe);
    assert_eq!(fnv1a64(UID.as_bytes()), 0xf200_eb58_c67e_abe3);
    assert_eq!(
        fnv1a64_continue(fnv1a64(b"foo"), b"bar"),
        fnv1a64(b"foobar")
    );
}

#[test]
fn parses_and_formats_canonically() {
    let cases = [
        (
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
            "shardRange(object.metadata.uid, '0x0000000000000000', '0x8000000000000000')",
        ),
        (
            "shardRange( object.metadata.namespace ,\"0x0\",'0XFF' )",
            "shardRange(object.metadata.namespace, '0x0000000000000000', '0x00000000000000ff')",
        ),
        (
            "shardRange(object.metadata.uid,'0x8000000000000000','0x10000000000000000')||\
             shardRange(object.metadata.uid,'0x0','0x10')",
            "shardRange(object.metadata.uid, '0x8000000000000000', '0x10000000000000000') || \
             shardRange(object.metadata.uid, '0x0000000000000000', '0x0000000000000010')",
        ),
        ("", ""),
    ];
    for (input, canonical) in cases {
        let sel = ShardSelector::parse(input).unwrap_or_else(|e| panic!("{input}: {e}"));
        assert_eq!(sel.to_string(), canonical, "{input}");
        // The canonical form parses back to the same selector.
        assert_eq!(
            canonical.parse::<ShardSelector>().unwrap(),
            sel,
            "{canonical}"
        );
    }
}

#[test]
fn rejects_malformed_selectors_naming_the_fault() {
    let cases = [
        (
            "shardRange(object.metadata.name, '0x0', '0x1')",
            "unsupported field",
        ),
        (
            "shardRange(metadata.uid, '0x0', '0x1')",
            "unsupported field",
        ),
        (
            "shardRange(object.metadata.uid, '0x0')",
            "takes 3 arguments",
        ),
        (
            "shardRange(object.metadata.uid, 0x0, '0x1')",
            "must be a quoted string",
        ),
        (
            "shardRange(object.metadata.uid, '0', '0x1')",
            "lacks the 0x prefix",
        ),
        (
            "shardRange(object.metadata.uid, '0xg', '0x1')",
            "not a hex number",
        ),
        (
            "shardRange(object.metadata.uid, '0x', '0x1')",
            "not a hex number",
        ),
        (
            "shardRange(object.metadata.uid, '0x0', '0x10000000000000001')",
            "not a hex number",
        ),
        (
            "shardRange(object.metadata.uid, '0x10000000000000000', '0x10000000000000000')",
            "below 2^64",
        ),
        (
            "shardRange(object.metadata.uid, '0x8', '0x8')",
            "is not below end",
        ),
        (
            "shardRange(object.metadata.uid, '0x0', '0x8') ||",
            "shardRange #2",
        ),
        (
            "shardRange(object.metadata.uid, '0x0', '0x8') && x",
            "not of the form",
        ),
        (
            "range(object.metadata.uid, '0x0', '0x8')",
            "not of the form",
        ),
    ];
    for (input, want) in cases {
        let err = ShardSelector::parse(input).expect_err(input);
        assert_eq!(err.kind, "shard");
        assert_eq!(err.input, input);
        assert!(err.to_string().contains(want), "{input}: {err}");
    }
}

#[test]
fn ranges_are_half_open_and_ored() {
    let h = fnv1a64(UID.as_bytes());
    let obj = with_uid("a", UID);
    let at = |start: u64, end: u128| {
        ShardSelector::from(ShardRange::new(ShardField::Uid, start, end).unwrap())
    };
    assert!(at(h, u128::from(h) + 1).matches(&obj), "start is inclusive");
    assert!(!at(0, u128::from(h)).matches(&obj), "end is exclusive");
    assert!(at(0, 1 << 64).matches(&obj), "the whole space");
    let miss = ShardRange::new(ShardField::Uid, 0, 1).unwrap();
    let hit = ShardRange::new(ShardField::Uid, h, 1 << 64).unwrap();
    assert!(ShardSelector::new(vec![miss, hit]).matches(&obj));
    assert!(!ShardSelector::new(vec![miss]).matches(&obj));
    assert!(
        ShardSelector::default().matches(&obj),
        "empty selects everything"
    );
    // The namespace field hashes the namespace, so one namespace lands on one side.
    let ns = fnv1a64(b"default");
    let by_ns = ShardRange::new(ShardField::Namespace, ns, u128::from(ns) + 1).unwrap();
    assert!(ShardSelector::from(by_ns).matches(&with_uid("b", "other")));
}

#[test]
fn split_partitions_the_hash_space() {
    for count in [1u64, 2, 3, 7] {
        let ranges: Vec<_> = (0..count)
            .map(|i| ShardRange::split(ShardField::Uid, i, count).unwrap())
            .collect();
        assert_eq!(ranges[0].start(), 0);
        assert_eq!(ranges.last().unwrap().end(), 1 << 64);
        for w in ranges.windows(2) {
            assert_eq!(u128::from(w[1].start()), w[0].end(), "contiguous");
        }
        for i in 0..200u32 {
            let h = fnv1a64(format!("uid-{i}").as_bytes());
            assert_eq!(ranges.iter().filter(|r| r.contains(h)).count(), 1);
        }
    }
    assert!(ShardRange::split(ShardField::Uid, 2, 2).is_err());
    assert!(ShardRange::split(ShardField::Uid, 0, 0).is_err());
}
