//! How a reflector is configured (client-go's `ReflectorOptions` plus the fields it sets on the
//! `Reflector` struct directly, such as `WatchListPageSize`).

use std::time::Duration;

/// Whether the reflector fills its store with a watch-list (`sendInitialEvents=true`) instead of
/// a paginated list.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum WatchListMode {
    /// Try a watch-list first; when the server rejects it (400/405/406/422/501) or never sends
    /// the `k8s.io/initial-events-end` bookmark within
    /// [`ReflectorOptions::watch_list_end_timeout`], fall back to list + watch and remember that
    /// for the rest of the reflector's life. Any other failure falls back for that pass only.
    #[default]
    Auto,
    /// Always list + watch (client-go with the `WatchListClient` feature gate off).
    Disabled,
}

/// The shared backoff between retries (client-go's `wait.Backoff` with `DelayWithReset`).
#[derive(Debug, Clone, PartialEq)]
pub struct BackoffOptions {
    /// The first delay (client-go: 800 ms).
    pub initial: Duration,
    /// Each delay is the previous one times this (client-go: 2).
    pub factor: f64,
    /// The largest un-jittered delay (client-go: 30 s).
    pub cap: Duration,
    /// Each delay `d` becomes a random value in `[d, d + jitter·d)` (client-go: 1.0).
    pub jitter: f64,
    /// Back to `initial` once this long has passed without a delay being asked for, i.e.
    /// without a failure (client-go: 2 min).
    pub reset_after: Duration,
}

impl Default for BackoffOptions {
    fn default() -> Self {
        BackoffOptions {
            initial: Duration::from_millis(800),
            factor: 2.0,
            cap: Duration::from_secs(30),
            jitter: 1.0,
            reset_after: Duration::from_secs(120),
        }
    }
}

/// Options of a [`crate::Reflector`].
#[derive(Debug, Clone, PartialEq)]
pub struct ReflectorOptions {
    /// Names the reflector in logs and in [`crate::ReflectorHandle::name`].
    pub name: String,
    /// `labelSelector` sent with every list and watch. client-go puts selectors in the
    /// `ListWatch` (`NewFilteredListWatchFromClient`); here they pass through the params, so any
    /// `ListerWatcher` (such as the transport's `Api`, which sends params as they are) filters
    /// without a wrapper. `None` leaves the params' selector to the `ListerWatcher`.
    pub label_selector: Option<String>,
    /// `fieldSelector` sent with every list and watch, like `label_selector`.
    pub field_selector: Option<String>,
    /// `shardSelector` (KEP-5866) sent with every list and watch, like `label_selector`: the
    /// store then holds only the objects of these hash ranges, if the server supports it.
    pub shard_selector: Option<String>,
    /// The list page size. `None` applies client-go's policy: 500, except that a list at a
    /// resourceVersion other than "" and "0" is not paginated (the watch cache serves it whole)
    /// unless an earlier list at "0" came back paginated (the watch cache is off). `Some(n)`
    /// always sends `limit=n` (client-go's `WatchListPageSize`); `Some(0)` never paginates.
    pub page_size: Option<i64>,
    /// How often the store is resynced while watching; zero turns resync off.
    pub resync_period: Duration,
    /// Whether to fill the store with a watch-list.
    pub watch_list: WatchListMode,
    /// How long a watch-list may take to deliver its `k8s.io/initial-events-end` bookmark
    /// (across re-attempts of streams that end early) before the reflector falls back to a list.
    /// client-go waits forever (kubernetes#140890). Raise it for very large collections.
    pub watch_list_end_timeout: Duration,
    /// The shortest server-side watch timeout; each watch asks for a random `timeoutSeconds` in
    /// `[min, 2·min)`. Values under 5 minutes are raised to 5 minutes, as in client-go.
    pub min_watch_timeout: Duration,
    /// The backoff shared by relists, watch retries and 429s.
    pub backoff: BackoffOptions,
}

/// client-go's `defaultMinWatchTimeout`.
pub(crate) const DEFAULT_MIN_WATCH_TIMEOUT: Duration = Duration::from_secs(300);

impl Default for ReflectorOptions {
    fn default() -> Self {
        ReflectorOptions {
            name: "reflector".to_string(),
            label_selector: None,
            field_selector: None,
            shard_selector: None,
            page_size: None,
            resync_period: Duration::ZERO,
            watch_list: WatchListMode::Auto,
            watch_list_end_timeout: Duration::from_secs(60),
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            backoff: BackoffOptions::default(),
        }
    }
}

impl ReflectorOptions {
    /// Default options with this name.
    pub fn named(name: impl Into<String>) -> Self {
        ReflectorOptions {
            name: name.into(),
            ..ReflectorOptions::default()
        }
    }
}
