//! Chaos scenarios for tests of clients (reflectors, informers): one random fault at a time on
//! the embedded server, and random writes plus the truth a cache must converge to on any
//! cluster. Seed the `pick`s from a seeded RNG so a failing run can be replayed.

use std::collections::BTreeMap;

use kcache_core::Status;
use kcache_testserver::{Error, Failure, RequestMatch, TestServer, Verb};
use serde_json::json;

use crate::raw_client::RawResponse;
use crate::test_cluster::TestCluster;

/// Injects into `server` one fault chosen by `pick` (any number: feed it from a seeded RNG so
/// a run can be replayed): cut watches, a watch closed mid-object, malformed bytes on watches,
/// an out-of-schedule bookmark, history compaction (410s), a burst of 1–3 failures (429, 500,
/// 503, 504 too-large-resourceVersion, 504 timeout) on lists or watches of `resource`, or a
/// restart.
pub async fn inject_random_fault(
    server: &TestServer,
    pick: u64,
    resource: &str,
) -> Result<(), Error> {
    let verb = if pick & 1 == 0 {
        Verb::List
    } else {
        Verb::Watch
    };
    let on = RequestMatch::any().verb(verb).resource(resource);
    let burst = 1 + ((pick >> 1) % 3) as usize;
    match (pick >> 3) % 12 {
        0 | 1 => server.cut_watches(),
        2 => server.close_watches_mid_object(),
        3 => server.send_malformed_on_watches(),
        4 => server.send_bookmarks(),
        5 => server.compact_history(),
        6 => server.fail_next(
            burst,
            on,
            Failure::TooManyRequests {
                retry_after_seconds: 0,
            },
        ),
        7 => server.fail_next(burst, on, Failure::InternalError),
        8 => server.fail_next(
            burst,
            on,
            Failure::ServiceUnavailable {
                retry_after_seconds: 0,
            },
        ),
        9 => server.fail_next(burst, on, Failure::TooLargeResourceVersion),
        10 => {
            let timeout = Status::failure(504, "Timeout", "injected timeout");
            server.fail_next(burst, on, Failure::Status(Box::new(timeout)))
        }
        _ => server.restart().await?,
    }
    Ok(())
}

impl TestCluster {
    /// One random write to a ConfigMap `cm-{0..names}` in `namespace`, chosen by `pick`: a
    /// create, a merge patch of its data, or a delete. Conflicts, not-founds and injected
    /// failures come back as the response (or error) for the caller to ignore.
    pub async fn random_configmap_write(
        &self,
        pick: u64,
        namespace: &str,
        names: u64,
    ) -> Result<RawResponse, Error> {
        let name = format!("cm-{}", (pick >> 2) % names.max(1));
        let value = (pick >> 16).to_string();
        let collection = format!("/api/v1/namespaces/{namespace}/configmaps");
        let object = format!("{collection}/{name}");
        let client = self.client();
        match pick % 3 {
            0 => {
                let cm = json!({"apiVersion": "v1", "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace}, "data": {"v": value}});
                client.post(&collection, &cm).await
            }
            1 => {
                let patch = json!({"data": {"v": value}});
                client
                    .patch(&object, "application/merge-patch+json", &patch)
                    .await
            }
            _ => client.delete(&object).await,
        }
    }

    /// The ConfigMaps of `namespace` as `namespace/name` → resourceVersion, from a consistent
    /// list: the truth a cache must converge to.
    pub async fn configmap_versions(
        &self,
        namespace: &str,
    ) -> Result<BTreeMap<String, u64>, Error> {
        let resp = self
            .client()
            .get(&format!("/api/v1/namespaces/{namespace}/configmaps"))
            .await?;
        let items = resp.body["items"].as_array().cloned().unwrap_or_default();
        Ok(items
            .iter()
            .map(|o| {
                let m = &o["metadata"];
                let key = format!(
                    "{}/{}",
                    m["namespace"].as_str().unwrap_or(""),
                    m["name"].as_str().unwrap_or("")
                );
                (
                    key,
                    m["resourceVersion"]
                        .as_str()
                        .and_then(|rv| rv.parse().ok())
                        .unwrap_or(0),
                )
            })
            .collect())
    }
}
