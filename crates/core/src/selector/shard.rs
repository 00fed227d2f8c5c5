//! KEP-5866 shard selectors (`shardSelector`, alpha in Kubernetes 1.36 behind the
//! `ShardedListAndWatch` feature gate): parsing, matching and canonical form.
//!
//! The grammar is a small subset of CEL, as apimachinery's `k8s.io/apimachinery/pkg/sharding`
//! accepts it:
//!
//! ```text
//! selector := range ( "||" range )*
//! range    := "shardRange" "(" field "," bound "," bound ")"
//! field    := "object.metadata.uid" | "object.metadata.namespace"
//! bound    := a quoted ('…' or "…") "0x"-prefixed hex number in [0, 2^64]
//! ```
//!
//! A range holds an object when `start <= fnv1a64(field value) < end`; ranges joined with `||`
//! are a union. The hash is FNV-1a 64 over the UTF-8 bytes of the field's value (an absent uid or
//! a cluster-scoped object's namespace hashes the empty string). The end bound may be
//! `0x10000000000000000` (2^64) so the last range of a split covers the top hash.
//!
//! Where the KEP leaves room, this parser chooses the lenient reading the real parser's
//! normalization implies: hex digits in either case and fewer than 16 digits are accepted, and
//! the canonical form ([`ShardSelector`]'s `Display`) writes 16 lowercase digits (17 for 2^64).
//! A range whose start is not below its end is an error (it would select nothing).

use std::fmt;
use std::str::FromStr;

use super::SelectorError;
use crate::Object;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;
const FNV_PRIME: u64 = 0x0000_0100_0000_01b3;

/// 2^64: the largest end bound, one past the top hash.
const HASH_SPACE: u128 = 1 << 64;

/// FNV-1a 64 of `bytes`: the hash `shardRange` compares with its bounds.
pub fn fnv1a64(bytes: &[u8]) -> u64 {
    fnv1a64_continue(FNV_OFFSET, bytes)
}

/// FNV-1a 64 continued from `state` (a previous [`fnv1a64`] result), for hashing a key in parts.
pub fn fnv1a64_continue(mut state: u64, bytes: &[u8]) -> u64 {
    for &b in bytes {
        state ^= u64::from(b);
        state = state.wrapping_mul(FNV_PRIME);
    }
    state
}

/// The object field a shard range hashes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ShardField {
    /// `object.metadata.uid`: spreads objects evenly; immutable, so an object never changes
    /// shard while it lives.
    Uid,
    /// `object.metadata.namespace`: keeps a namespace on one shard.
    Namespace,
}

impl ShardField {
    /// The CEL path as written in a selector.
    pub fn as_str(self) -> &'static str {
        match self {
            ShardField::Uid => "object.metadata.uid",
            ShardField::Namespace => "object.metadata.namespace",
        }
    }

    /// The value this field hashes for `obj` (empty when absent, like the server's resolver).
    pub fn value_of(self, obj: &impl Object) -> &str {
        match self {
            ShardField::Uid => obj.uid(),
            ShardField::Namespace => obj.namespace(),
        }
        .unwrap_or("")
    }
}

/// One `shardRange(field, start, end)`: the objects whose field hash is in `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct ShardRange {
    field: ShardField,
    start: u64,
    /// Up to 2^64, hence wider than a hash.
    end: u128,
}

impl ShardRange {
    /// The range `[start, end)` of `field`'s hash; `end` may be 2^64. Errors unless
    /// `start < end <= 2^64`.
    pub fn new(field: ShardField, start: u64, end: u128) -> Result<Self, String> {
        if end > HASH_SPACE {
            return Err(format!("end {end:#x} is above 0x10000000000000000 (2^64)"));
        }
        if u128::from(start) >= end {
            return Err(format!(
                "start {} is not below end {}",
                hex_bound(u128::from(start)),
                hex_bound(end)
            ));
        }
        Ok(ShardRange { field, start, end })
    }

    /// Shard `index` of `count` equal ranges of `field` (the last one ends at 2^64), so
    /// `(0..count).map(|i| ShardRange::split(f, i, count))` partitions every object.
    pub fn split(field: ShardField, index: u64, count: u64) -> Result<Self, String> {
        if count == 0 || index >= count {
            return Err(format!("shard {index} of {count} does not exist"));
        }
        let bound = |i: u64| HASH_SPACE * u128::from(i) / u128::from(count);
        // bound(index) < 2^64 because index < count.
        ShardRange::new(field, bound(index) as u64, bound(index + 1))
    }

    /// The hashed field.
    pub fn field(&self) -> ShardField {
        self.field
    }

    /// The first hash inside the range.
    pub fn start(&self) -> u64 {
        self.start
    }

    /// The first hash past the range (2^64 for the top range).
    pub fn end(&self) -> u128 {
        self.end
    }

    /// Whether `hash` is in `[start, end)`.
    pub fn contains(&self, hash: u64) -> bool {
        hash >= self.start && u128::from(hash) < self.end
    }
}

impl fmt::Display for ShardRange {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "shardRange({}, '{}', '{}')",
            self.field.as_str(),
            hex_bound(u128::from(self.start)),
            hex_bound(self.end)
        )
    }
}

/// A parsed `shardSelector`: the union of its ranges; no range selects everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct ShardSelector {
    ranges: Vec<ShardRange>,
}

impl ShardSelector {
    /// The selector of these ranges (their union).
    pub fn new(ranges: Vec<ShardRange>) -> Self {
        ShardSelector { ranges }
    }

    /// Parses the wire form; the empty string selects everything.
    pub fn parse(input: &str) -> Result<Self, SelectorError> {
        let err = |message: String| SelectorError {
            kind: "shard",
            input: input.to_string(),
            message,
        };
        if input.trim().is_empty() {
            return Ok(ShardSelector::default());
        }
        let mut ranges = Vec::new();
        for (i, part) in input.split("||").enumerate() {
            let range =
                parse_range(part.trim()).map_err(|m| err(format!("shardRange #{}: {m}", i + 1)))?;
            ranges.push(range);
        }
        Ok(ShardSelector { ranges })
    }

    /// Whether it selects everything (no range given).
    pub fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    /// The ranges, in the order given.
    pub fn ranges(&self) -> &[ShardRange] {
        &self.ranges
    }

    /// Whether `obj` is in one of the ranges (always, when empty).
    pub fn matches(&self, obj: &impl Object) -> bool {
        self.matches_with(|field| fnv1a64(field.value_of(obj).as_bytes()))
    }

    /// Whether the object whose field hashes are given by `hash_of` is in one of the ranges;
    /// for callers that keep hashes rather than objects (a server's store).
    pub fn matches_with(&self, mut hash_of: impl FnMut(ShardField) -> u64) -> bool {
        self.ranges.is_empty() || self.ranges.iter().any(|r| r.contains(hash_of(r.field)))
    }
}

impl fmt::Display for ShardSelector {
    /// The canonical wire form: ranges joined by ` || `, bounds as 16 lowercase hex digits.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, r) in self.ranges.iter().enumerate() {
            if i > 0 {
                f.write_str(" || ")?;
            }
            r.fmt(f)?;
        }
        Ok(())
    }
}

impl FromStr for ShardSelector {
    type Err = SelectorError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        ShardSelector::parse(s)
    }
}

impl From<ShardRange> for ShardSelector {
    fn from(range: ShardRange) -> Self {
        ShardSelector::new(vec![range])
    }
}

fn hex_bound(v: u128) -> String {
    format!("0x{v:016x}")
}

fn parse_range(s: &str) -> Result<ShardRange, String> {
    let args = s
        .strip_prefix("shardRange")
        .map(str::trim_start)
        .and_then(|r| r.strip_prefix('('))
        .and_then(|r| r.trim_end().strip_suffix(')'))
        .ok_or_else(|| format!("{s:?} is not of the form shardRange(field, 'start', 'end')"))?;
    let parts: Vec<&str> = args.split(',').map(str::trim).collect();
    let [field, start, end] = parts[..] else {
        return Err(format!(
            "shardRange takes 3 arguments (field, 'start', 'end'), got {}",
            parts.len()
        ));
    };
    let field = match field {
        "object.metadata.uid" => ShardField::Uid,
        "object.metadata.namespace" => ShardField::Namespace,
        other => {
            return Err(format!(
                "unsupported field {other:?}: only object.metadata.uid and \
                 object.metadata.namespace"
            ))
        }
    };
    let start = parse_bound(start, "start")?;
    let end = parse_bound(end, "end")?;
    let start = u64::try_from(start).map_err(|_| "start must be below 2^64".to_string())?;
    ShardRange::new(field, start, end)
}

fn parse_bound(quoted: &str, which: &str) -> Result<u128, String> {
    let unquoted = ['\'', '"']
        .iter()
        .find_map(|q| quoted.strip_prefix(*q)?.strip_suffix(*q))
        .ok_or_else(|| format!("{which} bound {quoted} must be a quoted string like '0x00ff'"))?;
    let digits = unquoted
        .strip_prefix("0x")
        .or_else(|| unquoted.strip_prefix("0X"))
        .ok_or_else(|| format!("{which} bound {quoted} lacks the 0x prefix"))?;
    let trimmed = digits.trim_start_matches('0');
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_hexdigit())
        || trimmed.len() > 17
        || (trimmed.len() == 17 && trimmed != "10000000000000000")
    {
        return Err(format!(
            "{which} bound {quoted} is not a hex number in [0x0, 0x10000000000000000]"
        ));
    }
    u128::from_str_radix(digits, 16).map_err(|e| format!("{which} bound {quoted}: {e}"))
}
