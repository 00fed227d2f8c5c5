//! The assignment of range and slice modes: the 64-bit hash space cut into [`RANGE_SLICES`]
//! equal slices, dealt out to the live shards. In range mode the hash is KEP-5866's FNV-1a of a
//! field and a shard's slices become `shardRange`s; in slice mode it is the ring's
//! [`hash_key`](crate::hash_key) of the object's shard key, and a shard selects its slices'
//! values of the slice label ([`crate::slice_label`]).
//!
//! The deal starts from the current one (what the shard Leases say), so it moves as few slices
//! as balance allows: every live shard keeps its slices up to its quota (`slices / n`, one more
//! for the first `slices % n` shards, those holding most first), and the slices no one keeps —
//! a gone shard's, a shard's surplus, or never dealt — fill the shards below their quota in
//! ascending order. A join moves exactly the new shard's quota (`1/(n+1)` of the slices), a
//! leave only the leaver's; the largest shard holds at most one slice more than the smallest.
//! A fresh ring deals contiguous blocks, so each shard's selector is one range; adjacent slices
//! of one shard are always merged into one `shardRange`.

use std::collections::{BTreeMap, BTreeSet};

use kcache_core::selector::{ShardField, ShardRange, ShardSelector};

/// How many equal slices range mode cuts the hash space into: enough that shards up to a few
/// dozen get within a few percent of an equal share, few enough that a selector stays short.
pub const RANGE_SLICES: u32 = 256;

/// Slice numbers, `0..RANGE_SLICES`.
pub(crate) type Slices = BTreeSet<u32>;

/// Slice `i` as a range of `field` (`i < RANGE_SLICES`).
fn slice(field: ShardField, i: u32) -> ShardRange {
    ShardRange::split(field, u64::from(i), u64::from(RANGE_SLICES))
        .unwrap_or_else(|e| unreachable!("slice {i} of {RANGE_SLICES}: {e}"))
}

/// The selector of `slices` over `field`, runs of adjacent slices merged into one range (empty
/// for no slice: callers never serve an empty selector, which selects everything).
pub(crate) fn selector_of(field: ShardField, slices: &Slices) -> ShardSelector {
    let mut ranges = Vec::new();
    let mut run: Option<(u32, u32)> = None;
    for &i in slices {
        run = match run {
            Some((first, last)) if last + 1 == i => Some((first, i)),
            Some((first, last)) => {
                ranges.push(merged(field, first, last));
                Some((i, i))
            }
            None => Some((i, i)),
        };
    }
    if let Some((first, last)) = run {
        ranges.push(merged(field, first, last));
    }
    ShardSelector::new(ranges)
}

fn merged(field: ShardField, first: u32, last: u32) -> ShardRange {
    let (a, b) = (slice(field, first), slice(field, last));
    ShardRange::new(field, a.start(), b.end())
        .unwrap_or_else(|e| unreachable!("slices {first}..={last}: {e}"))
}

/// The slices wholly inside `selector` (whatever its field): the inverse of [`selector_of`].
pub(crate) fn slices_of(selector: &ShardSelector) -> Slices {
    (0..RANGE_SLICES)
        .filter(|&i| {
            let s = slice(ShardField::Uid, i);
            selector
                .ranges()
                .iter()
                .any(|r| r.start() <= s.start() && s.end() <= r.end())
        })
        .collect()
}

/// `slices` written as a list of runs, `0-84,170,200-255` (empty for none): how a shard Lease
/// records slices in slice mode.
pub(crate) fn format_slices(slices: &Slices) -> String {
    let mut runs: Vec<(u32, u32)> = Vec::new();
    for &i in slices {
        match runs.last_mut() {
            Some((_, last)) if *last + 1 == i => *last = i,
            _ => runs.push((i, i)),
        }
    }
    let run = |&(first, last): &(u32, u32)| match first == last {
        true => first.to_string(),
        false => format!("{first}-{last}"),
    };
    runs.iter().map(run).collect::<Vec<_>>().join(",")
}

/// Reads what [`format_slices`] writes; fails naming the part that is not a slice or a run of
/// slices below [`RANGE_SLICES`].
pub(crate) fn parse_slices(text: &str) -> Result<Slices, String> {
    let mut slices = Slices::new();
    for part in text.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let number = |n: &str| {
            n.trim()
                .parse::<u32>()
                .ok()
                .filter(|&i| i < RANGE_SLICES)
                .ok_or_else(|| format!("{part:?} is not a slice (0..{RANGE_SLICES}) or a run a-b"))
        };
        let (first, last) = match part.split_once('-') {
            Some((a, b)) => (number(a)?, number(b)?),
            None => (number(part)?, number(part)?),
        };
        if first > last {
            return Err(format!("{part:?}: a run goes upwards"));
        }
        slices.extend(first..=last);
    }
    Ok(slices)
}

/// The deal for `live` (sorted shard names) starting from `current` (each shard's slices now;
/// shards not live are ignored): see the module docs.
pub(crate) fn deal(
    current: &BTreeMap<String, Slices>,
    live: &[String],
) -> BTreeMap<String, Slices> {
    let mut deal: BTreeMap<String, Slices> = BTreeMap::new();
    if live.is_empty() {
        return deal;
    }
    let n = live.len() as u32;
    let (base, extra) = (RANGE_SLICES / n, (RANGE_SLICES % n) as usize);
    let held = |s: &String| current.get(s).map_or(0, BTreeSet::len);
    let mut order: Vec<&String> = live.iter().collect();
    order.sort_by(|a, b| held(b).cmp(&held(a)).then(a.cmp(b)));
    let mut quota: BTreeMap<&String, usize> = BTreeMap::new();
    for (rank, shard) in order.iter().enumerate() {
        quota.insert(shard, base as usize + usize::from(rank < extra));
    }
    let mut taken = Slices::new();
    for shard in live {
        let keep: Slices = current
            .get(shard)
            .into_iter()
            .flatten()
            .filter(|&&i| i < RANGE_SLICES && !taken.contains(&i))
            .take(quota[shard])
            .copied()
            .collect();
        taken.extend(&keep);
        deal.insert(shard.clone(), keep);
    }
    let mut free = (0..RANGE_SLICES).filter(|i| !taken.contains(i));
    for shard in live {
        let mine = deal.entry(shard.clone()).or_default();
        let missing = quota[shard].saturating_sub(mine.len());
        mine.extend(free.by_ref().take(missing));
    }
    deal
}

#[cfg(test)]
mod tests {
    use super::*;
    use kcache_core::selector::fnv1a64;

    fn names(n: usize) -> Vec<String> {
        (0..n).map(|i| format!("shard-{i:02}")).collect()
    }

    fn moved(a: &BTreeMap<String, Slices>, b: &BTreeMap<String, Slices>) -> usize {
        b.iter()
            .map(|(s, slices)| {
                slices
                    .difference(&a.get(s).cloned().unwrap_or_default())
                    .count()
            })
            .sum()
    }

    /// Every slice belongs to exactly one live shard, and the selectors partition hashes too.
    fn assert_partition(deal: &BTreeMap<String, Slices>, n: usize) {
        assert_eq!(deal.len(), n);
        let mut all = Slices::new();
        for slices in deal.values() {
            assert!(all.is_disjoint(slices), "a slice dealt twice");
            all.extend(slices);
        }
        assert_eq!(all.len(), RANGE_SLICES as usize, "every slice dealt");
        let sizes: Vec<usize> = deal.values().map(BTreeSet::len).collect();
        let (min, max) = (sizes.iter().min().unwrap(), sizes.iter().max().unwrap());
        assert!(max - min <= 1, "balanced: {sizes:?}");
        let selectors: Vec<ShardSelector> = deal
            .values()
            .map(|s| selector_of(ShardField::Uid, s))
            .collect();
        for k in 0..2000u32 {
            let h = fnv1a64(format!("uid-{k}").as_bytes());
            let owners = selectors.iter().filter(|s| s.matches_with(|_| h)).count();
            assert_eq!(owners, 1, "hash {h:#x} owned by {owners} shards");
        }
        for h in [0, u64::MAX] {
            let owners = selectors.iter().filter(|s| s.matches_with(|_| h)).count();
            assert_eq!(owners, 1, "edge hash {h:#x}");
        }
    }

    #[test]
    fn live_shards_partition_the_hash_space_exactly() {
        for n in [1, 2, 3, 7, 10, 100] {
            let deal = deal(&BTreeMap::new(), &names(n));
            assert_partition(&deal, n);
        }
    }

    #[test]
    fn a_fresh_deal_gives_each_shard_one_range() {
        let deal = deal(&BTreeMap::new(), &names(3));
        for slices in deal.values() {
            assert_eq!(selector_of(ShardField::Uid, slices).ranges().len(), 1);
        }
    }

    #[test]
    fn joins_and_leaves_move_only_about_one_nth() {
        let mut current = deal(&BTreeMap::new(), &names(3));
        for n in 4..=12 {
            let next = deal(&current, &names(n));
            assert_partition(&next, n);
            let fraction = moved(&current, &next) as f64 / f64::from(RANGE_SLICES);
            assert!(fraction <= 1.1 / n as f64, "join to {n}: moved {fraction}");
            let new = &names(n)[n - 1];
            assert_eq!(moved(&current, &next), next[new].len(), "only to {new}");
            current = next;
        }
        for leaver in ["shard-05", "shard-00", "shard-11"] {
            let live: Vec<String> = current.keys().filter(|s| *s != leaver).cloned().collect();
            let next = deal(&current, &live);
            assert_partition(&next, live.len());
            assert_eq!(
                moved(&current, &next),
                current[leaver].len(),
                "only {leaver}'s"
            );
            current = next;
        }
    }

    #[test]
    fn a_deal_is_stable_and_ignores_what_is_not_live() {
        let current = deal(&BTreeMap::new(), &names(4));
        assert_eq!(deal(&current, &names(4)), current);
        let mut with_gone = current.clone();
        with_gone.insert("gone".into(), (0..10).collect());
        assert_eq!(deal(&with_gone, &names(4)), current);
    }

    #[test]
    fn selectors_round_trip_to_slices() {
        let slices: Slices = [0, 1, 2, 7, 100, 101, 255].into();
        let sel = selector_of(ShardField::Namespace, &slices);
        assert_eq!(sel.ranges().len(), 4, "{sel}");
        assert_eq!(slices_of(&sel), slices);
        let parsed = ShardSelector::parse(&sel.to_string()).unwrap();
        assert_eq!(slices_of(&parsed), slices);
        assert!(selector_of(ShardField::Uid, &Slices::new()).is_empty());
    }

    #[test]
    fn slice_lists_round_trip_and_bad_ones_are_named() {
        let slices: Slices = [0, 1, 2, 7, 100, 101, 255].into();
        assert_eq!(format_slices(&slices), "0-2,7,100-101,255");
        assert_eq!(parse_slices("0-2,7,100-101,255").unwrap(), slices);
        assert_eq!(format_slices(&Slices::new()), "");
        assert!(parse_slices("").unwrap().is_empty());
        let all: Slices = (0..RANGE_SLICES).collect();
        assert_eq!(parse_slices(&format_slices(&all)).unwrap(), all);
        for bad in ["256", "3-1", "x", "1-"] {
            let e = parse_slices(bad).unwrap_err();
            assert!(e.contains(bad), "{bad}: {e}");
        }
    }
}
