//! [`Mode`]: how a ring's objects are divided among its shards, and the check that a server
//! filters by `shardSelector` before range mode relies on it.
//!
//! A server that does not know KEP-5866 (kube-apiserver before 1.36, or with the
//! `ShardedListAndWatch` gate off) ignores the parameter and answers every object: a shard
//! running on it in range mode would silently act on everything. The check lists one object of
//! each sharded kind with a selector of the whole hash space and looks for the server's echo
//! (`metadata.shardInfo`), which only a server that applied the selector writes.

use kcache_core::selector::{ShardField, ShardRange, ShardSelector};
use kcache_core::{DynamicObject, Error, ListParams};
use kcache_transport::{Api, Client};

use crate::conventions::Ring;
use crate::sharded_kind::ShardedKind;

/// How a ring's objects are divided among its shards ([`Sharding::mode`](crate::Sharding::mode)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// The sharder labels each object with its shard and drains it before a move
    /// (timebertt/kubernetes-controller-sharding's design): works on every server.
    #[default]
    Labels,
    /// Shards own hash ranges of the field (KEP-5866 `shardSelector`), assigned on their
    /// Leases; no object is written. Fails to start on a server that does not filter by it.
    Ranges(ShardField),
    /// Each object is labelled once with its hash slice (`slice.sharding.kcache.dev/<ring>`:
    /// [`slice_of`](crate::slice_of) its shard key, the key label mode uses), and shards own
    /// slices assigned on their Leases as in range mode, selecting them with a set-based label
    /// selector: a join, a stop or a kill writes Leases only, on every server.
    Slices,
    /// Ranges of the field where the server filters by `shardSelector`, [`Mode::Slices`]
    /// elsewhere (and with controlled kinds over uids, which do not hash with their owners).
    Auto(ShardField),
}

/// A `shardSelector` over the whole hash space of `field`.
fn everything(field: ShardField) -> ShardSelector {
    ShardRange::split(field, 0, 1)
        .unwrap_or_else(|e| unreachable!("one range of one: {e}"))
        .into()
}

/// The first sharded kind (or, with none, the ring's Leases) whose list ignores a
/// `shardSelector` of `field`, as its resource's plural; `None`: the server filters them all.
pub(crate) async fn ignores_shard_selector(
    client: &Client,
    ring: &Ring,
    kinds: &[ShardedKind],
    field: ShardField,
) -> Result<Option<String>, Error> {
    let leases = (
        kcache_leaderelection::leases(),
        Some(ring.lease_namespace().to_string()),
    );
    let mut probes: Vec<_> = kinds
        .iter()
        .map(|k| (k.resource.clone(), k.namespace.clone()))
        .collect();
    if probes.is_empty() {
        probes.push(leases);
    }
    let params = ListParams {
        limit: Some(1),
        shard_selector: Some(everything(field).to_string()),
        ..ListParams::default()
    };
    for (resource, namespace) in probes {
        let api =
            Api::<DynamicObject>::dynamic(client.clone(), resource.clone(), namespace.as_deref());
        if api.list(&params).await?.metadata.shard_info.is_none() {
            return Ok(Some(resource.plural));
        }
    }
    Ok(None)
}
