//! The narrow trait through which the elector uses the cluster: get, create and update of one
//! Lease (client-go's `resourcelock.Interface`, reduced to the Lease lock).

use std::future::Future;

use kcache_core::Error;

use crate::record::{LeaderElectionRecord, Lease};

/// Reads and writes the one Lease an election runs on.
///
/// Implemented over kcache-transport by [`LeaseLock`](crate::LeaseLock) (feature `transport`)
/// and in memory by [`MemoryLease`](crate::memory::MemoryLease); any client can implement it.
/// Errors are [`kcache_core::Error`]s so that 404 and 409 are recognised whatever the client:
///
/// - `get` answers `Ok(None)` when the Lease does not exist;
/// - `create` fails with 409 (AlreadyExists) when someone created it first;
/// - `update` must be conditional on `lease.resource_version` and fail with 409 Conflict when the
///   stored Lease has changed since — that is what makes two candidates' writes a race one of
///   them loses instead of both winning.
pub trait LeaseClient: Send + Sync + 'static {
    /// Reads the Lease.
    fn get(&self) -> impl Future<Output = Result<Option<Lease>, Error>> + Send;

    /// Creates the Lease holding `record`.
    fn create(
        &self,
        record: &LeaderElectionRecord,
    ) -> impl Future<Output = Result<Lease, Error>> + Send;

    /// Replaces the Lease's record if its resourceVersion is still `lease.resource_version`.
    fn update(&self, lease: &Lease) -> impl Future<Output = Result<Lease, Error>> + Send;

    /// `namespace/name` of the Lease, for logs and health messages.
    fn describe(&self) -> String;
}
