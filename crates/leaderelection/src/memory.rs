//! An in-memory Lease with per-client fault injection, for tests of code that uses leader
//! election (and this crate's own timing tests on paused tokio time).
//!
//! [`MemoryLease`] is the stored object — the "server" — with resourceVersion semantics: create
//! fails with 409 AlreadyExists when it exists, update with 409 Conflict when the given
//! resourceVersion is not the stored one. Each candidate gets its own [`MemoryLeaseClient`], whose
//! requests can be cut off, failed, delayed, or applied with their response lost.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::Duration;

use kcache_core::{Error, Status};
use parking_lot::Mutex;

use crate::lock::LeaseClient;
use crate::record::{LeaderElectionRecord, Lease};

#[derive(Debug, Default)]
struct Stored {
    lease: Option<Lease>,
    revision: u64,
}

/// One Lease held in memory, shared by the clients made from it.
#[derive(Debug, Clone)]
pub struct MemoryLease {
    name: String,
    stored: Arc<Mutex<Stored>>,
}

impl MemoryLease {
    /// An absent Lease called `name` (used in messages, e.g. `kube-system/my-controller`).
    pub fn new(name: impl Into<String>) -> Self {
        MemoryLease {
            name: name.into(),
            stored: Arc::new(Mutex::new(Stored::default())),
        }
    }

    /// A client with no faults.
    pub fn client(&self) -> MemoryLeaseClient {
        MemoryLeaseClient {
            lease: self.clone(),
            faults: Arc::new(Mutex::new(Faults::default())),
        }
    }

    /// The stored Lease.
    pub fn get(&self) -> Option<Lease> {
        self.stored.lock().lease.clone()
    }

    /// Stores `record` unconditionally, as another writer would (a new resourceVersion).
    pub fn put(&self, record: LeaderElectionRecord) -> Lease {
        let mut s = self.stored.lock();
        s.revision += 1;
        let lease = Lease {
            resource_version: s.revision.to_string(),
            record,
        };
        s.lease = Some(lease.clone());
        lease
    }

    fn create(&self, record: &LeaderElectionRecord) -> Result<Lease, Error> {
        if self.stored.lock().lease.is_some() {
            let msg = format!("leases {:?} already exists", self.name);
            return Err(Status::failure(409, "AlreadyExists", msg).into());
        }
        Ok(self.put(record.clone()))
    }

    fn update(&self, lease: &Lease) -> Result<Lease, Error> {
        let mut s = self.stored.lock();
        let Some(current) = &s.lease else {
            let msg = format!("leases {:?} not found", self.name);
            return Err(Status::failure(404, "NotFound", msg).into());
        };
        if current.resource_version != lease.resource_version {
            let msg = format!(
                "Operation cannot be fulfilled on leases {:?}: the object has been modified",
                self.name
            );
            return Err(Status::failure(409, "Conflict", msg).into());
        }
        s.revision += 1;
        let stored = Lease {
            resource_version: s.revision.to_string(),
            record: lease.record.clone(),
        };
        s.lease = Some(stored.clone());
        Ok(stored)
    }
}

#[derive(Debug, Default)]
struct Faults {
    cut: bool,
    fail: VecDeque<Status>,
    lose_responses: usize,
    latency: Duration,
    requests: usize,
}

/// One candidate's connection to a [`MemoryLease`], with fault injection.
#[derive(Debug, Clone)]
pub struct MemoryLeaseClient {
    lease: MemoryLease,
    faults: Arc<Mutex<Faults>>,
}

impl MemoryLeaseClient {
    /// While `cut`, every request fails with a connection error and reaches nothing.
    pub fn set_cut(&self, cut: bool) {
        self.faults.lock().cut = cut;
    }

    /// Fails the next requests with these statuses, one each, before they reach the Lease.
    pub fn fail_next(&self, statuses: impl IntoIterator<Item = Status>) {
        self.faults.lock().fail.extend(statuses);
    }

    /// The next `n` requests reach the Lease (a write is applied) but their responses are lost:
    /// the caller sees a request error, as after a timeout.
    pub fn lose_next_responses(&self, n: usize) {
        self.faults.lock().lose_responses += n;
    }

    /// Each request waits `latency` before it reaches the Lease and again before its response.
    pub fn set_latency(&self, latency: Duration) {
        self.faults.lock().latency = latency;
    }

    /// How many requests this client has made.
    pub fn requests(&self) -> usize {
        self.faults.lock().requests
    }

    async fn call<T>(&self, op: impl FnOnce(&MemoryLease) -> Result<T, Error>) -> Result<T, Error> {
        let latency = {
            let mut f = self.faults.lock();
            f.requests += 1;
            f.latency
        };
        tokio::time::sleep(latency).await;
        let lose = {
            let mut f = self.faults.lock();
            if f.cut {
                return Err(Error::Connect("connection refused (injected)".into()));
            }
            if let Some(status) = f.fail.pop_front() {
                return Err(status.into());
            }
            let lose = f.lose_responses > 0;
            f.lose_responses = f.lose_responses.saturating_sub(1);
            lose
        };
        let result = op(&self.lease);
        tokio::time::sleep(latency).await;
        if lose || self.faults.lock().cut {
            return Err(Error::Request("the response was lost (injected)".into()));
        }
        result
    }
}

impl LeaseClient for MemoryLeaseClient {
    async fn get(&self) -> Result<Option<Lease>, Error> {
        self.call(|l| Ok(l.get())).await
    }

    async fn create(&self, record: &LeaderElectionRecord) -> Result<Lease, Error> {
        self.call(|l| l.create(record)).await
    }

    async fn update(&self, lease: &Lease) -> Result<Lease, Error> {
        self.call(|l| l.update(lease)).await
    }

    fn describe(&self) -> String {
        self.lease.name.clone()
    }
}
