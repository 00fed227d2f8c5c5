//! Wall-clock timestamps in the API server's formats. Every decision (series window, spam
//! filter, aggregation) is taken on `tokio::time::Instant` instead, so paused-time tests drive
//! them; these strings only go into the written objects.

use jiff::Timestamp;

/// `metav1.MicroTime`: RFC 3339 with microseconds, UTC (`eventTime`, `lastObservedTime`).
pub(crate) fn micro_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string()
}

/// `metav1.Time`: RFC 3339 to the second, UTC (`firstTimestamp`, `lastTimestamp`).
pub(crate) fn seconds_time(t: Timestamp) -> String {
    t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_as_the_api_server_does() {
        let t: Timestamp = "2024-02-29T23:59:58.123456789Z".parse().unwrap();
        assert_eq!(micro_time(t), "2024-02-29T23:59:58.123456Z");
        assert_eq!(seconds_time(t), "2024-02-29T23:59:58Z");
        let whole: Timestamp = "1970-01-01T00:00:00Z".parse().unwrap();
        assert_eq!(micro_time(whole), "1970-01-01T00:00:00.000000Z");
    }
}
