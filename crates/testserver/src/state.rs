//! What every request handler shares: the store, the resource table, options and faults.

use std::sync::Arc;

use tokio::sync::broadcast;

use crate::config::ServerConfig;
use crate::http::faults::{Faults, WatchControl};
use crate::http::tokens::Tokens;
use crate::resources::ResourceTable;
use crate::storage::Storage;

/// Shared by every connection; survives [`crate::TestServer::restart`].
#[derive(Debug)]
pub(crate) struct ServerState {
    pub storage: Arc<Storage>,
    pub resources: ResourceTable,
    pub config: ServerConfig,
    pub faults: Faults,
    pub watch_control: broadcast::Sender<WatchControl>,
    /// Service-account tokens issued by `/token`.
    pub tokens: Tokens,
    /// `host:port` the server answers on (discovery's serverAddressByClientCIDRs).
    pub address: String,
}

impl ServerState {
    pub(crate) fn new(config: ServerConfig, address: String) -> Arc<Self> {
        Arc::new(ServerState {
            storage: Storage::new(config.history_window, config.watcher_buffer),
            resources: ResourceTable::new(),
            config,
            faults: Faults::default(),
            watch_control: broadcast::channel(64).0,
            tokens: Tokens::default(),
            address,
        })
    }

    /// [`crate::TestServer::expire_watches`], shared with its admin endpoint: the revision moves
    /// on, all history is compacted through it and every watch is cut.
    pub(crate) fn expire_watches(&self) -> u64 {
        let rev = self.storage.compact_past_now();
        let _ = self.watch_control.send(WatchControl::Cut);
        rev
    }
}
