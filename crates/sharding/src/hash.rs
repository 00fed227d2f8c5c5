//! The ring's 64-bit hash: FNV-1a 64 over the bytes, then MurmurHash3's `fmix64` finalizer.
//!
//! Stable by construction (a fixed algorithm with fixed constants, unlike std's randomly keyed
//! SipHash), so every replica, every process and every release places a key at the same point.
//! FNV-1a alone is what KEP-5866's `shardRange` uses on uids, but its output changes little in the
//! high bits when only the last bytes of an input change (`shard-a#1`, `shard-a#2`, ...); the
//! finalizer spreads every input bit over all 64 output bits, which the ring's balance needs.
//! The FNV-1a itself is kcache-core's, the one `shardRange` selectors use.

pub(crate) use kcache_core::selector::{fnv1a64, fnv1a64_continue};

/// MurmurHash3's 64-bit finalizer: a bijection that lets every input bit affect every output bit.
pub(crate) fn fmix64(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
    h ^= h >> 33;
    h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    h ^= h >> 33;
    h
}

/// The ring position of `key`.
pub fn hash_key(key: &str) -> u64 {
    fmix64(fnv1a64(key.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hash_key_is_fixed_across_builds() {
        // Pinned values: a change here moves every object of every ring.
        assert_eq!(hash_key(""), fmix64(0xcbf2_9ce4_8422_2325));
        assert_eq!(hash_key("a"), fmix64(0xaf63_dc4c_8601_ec8c));
        assert_ne!(hash_key("shard-a#1") >> 56, hash_key("shard-a#2") >> 56);
    }
}
