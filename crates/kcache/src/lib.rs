#![doc = include_str!("../README.md")]

/// The shared types and narrow traits ([`kcache-core`](kcache_core)).
pub use kcache_core as core;
pub use kcache_core::{DynamicObject, Object, ObjectKey, PartialObjectMeta, Resource};

/// client-go's `util/workqueue` ([`kcache-workqueue`](kcache_workqueue)).
#[cfg(feature = "workqueue")]
pub use kcache_workqueue as workqueue;

/// client-go's `util/flowcontrol` token bucket ([`kcache-flowcontrol`](kcache_flowcontrol)).
#[cfg(feature = "flowcontrol")]
pub use kcache_flowcontrol as flowcontrol;

/// client-go's thread-safe store, indexers and listers ([`kcache-store`](kcache_store)).
#[cfg(feature = "store")]
pub use kcache_store as store;

/// client-go's DeltaFIFO and RealFIFO ([`kcache-delta-fifo`](kcache_delta_fifo)).
#[cfg(feature = "delta-fifo")]
pub use kcache_delta_fifo as delta_fifo;

/// client-go's Reflector ([`kcache-reflector`](kcache_reflector)).
#[cfg(feature = "reflector")]
pub use kcache_reflector as reflector;

/// client-go's shared informer and informer factory ([`kcache-informer`](kcache_informer)).
#[cfg(feature = "informer")]
pub use kcache_informer as informer;

/// The REST and watch client ([`kcache-transport`](kcache_transport)).
#[cfg(feature = "transport")]
pub use kcache_transport as transport;

/// Compact, structurally shared objects for large caches ([`kcache-compact`](kcache_compact)).
#[cfg(feature = "compact")]
pub use kcache_compact as compact;

/// client-go's event recorder and broadcaster ([`kcache-events`](kcache_events)).
#[cfg(feature = "events")]
pub use kcache_events as events;

/// client-go's leader election on a Lease ([`kcache-leaderelection`](kcache_leaderelection)).
#[cfg(feature = "leaderelection")]
pub use kcache_leaderelection as leaderelection;

/// The reconcile runtime and its Manager ([`kcache-controller`](kcache_controller)).
#[cfg(feature = "controller")]
pub use kcache_controller as controller;

/// One controller's objects spread over several replicas ([`kcache-sharding`](kcache_sharding)).
#[cfg(feature = "sharding")]
pub use kcache_sharding as sharding;

/// The integration-test harness ([`kcache-testing`](kcache_testing)): `TestCluster`, raw client.
#[cfg(feature = "testing")]
pub use kcache_testing as testing;
/// The embedded Kubernetes API server for tests ([`kcache-testserver`](kcache_testserver)).
#[cfg(feature = "testserver")]
pub use kcache_testserver as testserver;
