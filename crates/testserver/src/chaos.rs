//! One random fault at a time, for chaos tests of clients (reflectors, informers).

use std::collections::BTreeMap;

use kcache_core::Status;
use serde_json::json;

use crate::{Error, Failure, RawResponse, RequestMatch, TestCluster, TestServer, Verb};

impl TestServer {
    /// Injects one fault chosen by `pick` (any number: feed it from a seeded RNG so a run can be
    /// replayed): cut watches, a watch closed mid-object, malformed bytes on watches, an
    /// out-of-schedule bookmark, history compaction (410s), a burst of 1–3 failures (429, 500,
    /// 503, 504 too-large-resourceVersion, 504 timeout) on lists or watches of `resource`, or a
    /// restart.
    pub async fn inject_random_fault(&self, pick: u64, resource: &str) -> Result<(), Error> {
        let verb = if pick & 1 == 0 {
            Verb::List
        } else {
            Verb::Watch
        };
        let on = RequestMatch::any().verb(verb).resource(resource);
        let burst = 1 + ((pick >> 1) % 3) as usize;
        match (pick >> 3) % 12 {
            0 | 1 => self.cut_watches(),
            2 => self.close_watches_mid_object(),
            3 => self.send_malformed_on_watches(),
            4 => self.send_bookmarks(),
            5 => self.compact_history(),
            6 => self.fail_next(
                burst,
                on,
                Failure::TooManyRequests {
                    retry_after_seconds: 0,
                },
            ),
            7 => self.fail_next(burst, on, Failure::InternalError),
            8 => self.fail_next(
                burst,
                on,
                Failure::ServiceUnavailable {
                    retry_after_seconds: 0,
                },
            ),
            9 => self.fail_next(burst, on, Failure::TooLargeResourceVersion),
            10 => {
                let timeout = Status::failure(504, "Timeout", "injected timeout");
                self.fail_next(burst, on, Failure::Status(Box::new(timeout)))
            }
            _ => self.restart().await?,
        }
        Ok(())
    }
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
