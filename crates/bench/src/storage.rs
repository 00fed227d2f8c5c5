//! The `--storage` flag of the scenarios that cache typed objects.

/// How a typed informer keeps its objects (kcache-informer's two storage modes).
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Storage {
    /// Structurally shared trees (`CompactInformer<K>`, `Compact<K>`); typed on the way out.
    Compact,
    /// Typed objects (`SharedIndexInformer<K>`).
    Plain,
}

impl Storage {
    /// The flag's value, as the JSON line names it.
    pub fn name(self) -> &'static str {
        match self {
            Storage::Compact => "compact",
            Storage::Plain => "plain",
        }
    }
}
