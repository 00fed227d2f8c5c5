//! [`ShardingError`]: why a replica could not start.

use kcache_core::selector::ShardField;
use kcache_leaderelection::ConfigError;

/// Why [`Sharding::run`](crate::Sharding::run) could not start.
#[derive(Debug)]
#[non_exhaustive]
pub enum ShardingError {
    /// The lease timing breaks client-go's rules.
    Config(ConfigError),
    /// [`Mode::Ranges`](crate::Mode::Ranges) on a server that ignored the `shardSelector` of a
    /// list of `resource` (kube-apiserver before 1.36, or the `ShardedListAndWatch` gate off):
    /// every shard would act on every object.
    RangesUnsupported {
        /// The resource (plural) whose list came back unfiltered.
        resource: String,
    },
    /// [`Mode::Ranges`](crate::Mode::Ranges) over uids with controlled kinds: a child's uid
    /// does not hash with its owner's, so the owner's shard would not see it. Shard by
    /// namespace, or use label mode.
    ControlledByUid,
    /// Checking whether the server filters by `shardSelector` failed.
    Probe(kcache_core::Error),
}

impl std::fmt::Display for ShardingError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ShardingError::Config(e) => write!(f, "invalid lease timing: {e}"),
            ShardingError::RangesUnsupported { resource } => write!(
                f,
                "range mode needs server-side shard selectors (KEP-5866, Kubernetes 1.36 with the \
                 ShardedListAndWatch feature gate), but the server ignored the shardSelector of a \
                 list of {resource} (no metadata.shardInfo): use Mode::Labels or Mode::Auto"
            ),
            ShardingError::ControlledByUid => write!(
                f,
                "range mode over {} cannot shard controlled kinds (a child's uid does not hash \
                 with its owner's): shard by {} or use label mode",
                ShardField::Uid.as_str(),
                ShardField::Namespace.as_str()
            ),
            ShardingError::Probe(e) => {
                write!(
                    f,
                    "checking whether the server filters by shardSelector: {e}"
                )
            }
        }
    }
}

impl std::error::Error for ShardingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ShardingError::Config(e) => Some(e),
            ShardingError::Probe(e) => Some(e),
            _ => None,
        }
    }
}

impl From<ConfigError> for ShardingError {
    fn from(e: ConfigError) -> Self {
        ShardingError::Config(e)
    }
}
