//! Benchmarks at scale on the embedded server: realistic pods seeded by the server itself, large
//! lists streamed (whole, paged, gzipped), and the admin trigger that forces clients to relist.

use std::io::Read;

use http::Method;
use kcache_testserver::{realistic_pod, ServerConfig, TestServer};
use serde_json::Value;

/// Pod 0 of `cgbench -scenario podlist`'s fixture, as client-go's generator writes it.
const CGBENCH_POD_0: &str = include_str!("fixtures/cgbench-pod-0.json");

async fn seeded(pods: usize) -> TestServer {
    // The pods' ReplicaSets are not seeded: no garbage collector may take them.
    let config = ServerConfig {
        kube_controller_manager: false,
        ..ServerConfig::default()
    };
    let server = TestServer::start(config).await.unwrap();
    server.seed_realistic_pods(pods).unwrap();
    server
}

fn client(server: &TestServer) -> kcache_testing::RawClient {
    kcache_testing::RawClient::new(&server.base_url(), None, None).unwrap()
}

fn without_rv(mut pod: Value) -> Value {
    pod["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("resourceVersion");
    pod
}

#[tokio::test]
async fn seeded_pods_have_the_cgbench_fixture_shape() {
    let server = seeded(3).await;
    let resp = client(&server)
        .get("/api/v1/namespaces/ns-0/pods/app-0-7d9f8c6b5-00000")
        .await
        .unwrap();
    assert_eq!(resp.status, 200);
    let want: Value = serde_json::from_str(CGBENCH_POD_0).unwrap();
    assert_eq!(without_rv(resp.body.clone()), without_rv(want));
    // The same bytes but for the resourceVersion's digits and the trailing newline.
    let served = resp.raw.len() as i64 - 1;
    let fixture = CGBENCH_POD_0.len() as i64;
    assert!((served - fixture).abs() <= 8, "{served} vs {fixture} bytes");
    assert_eq!(without_rv(realistic_pod(0)), without_rv(resp.body));
    // Spread over the fixture's namespaces, which exist.
    let ns = client(&server)
        .get("/api/v1/namespaces/ns-2")
        .await
        .unwrap();
    assert_eq!(ns.status, 200);
    // Three pods and their three namespaces beside what a fresh server holds.
    let fresh = TestServer::start(ServerConfig::default()).await.unwrap();
    assert_eq!(server.object_count(), fresh.object_count() + 3 + 3);
}

#[tokio::test]
async fn seeding_twice_keeps_one_copy_of_each_pod() {
    let server = seeded(5).await;
    let before = server.object_count();
    server.seed_realistic_pods(5).unwrap();
    assert_eq!(server.object_count(), before);
}

fn names(list: &Value) -> Vec<String> {
    list["items"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["metadata"]["name"].as_str().unwrap().to_string())
        .collect()
}

#[tokio::test]
async fn a_large_list_streams_with_its_exact_length_whole_paged_and_gzipped() {
    // ~1.3 MB of pods: several chunks, and over the gzip threshold.
    let server = seeded(300).await;
    let c = client(&server);
    let whole = c
        .request_with_headers(Method::GET, "/api/v1/pods", &[], "", "")
        .await
        .unwrap();
    assert_eq!(whole.status(), 200);
    let length: usize = whole.headers()[http::header::CONTENT_LENGTH]
        .to_str()
        .unwrap()
        .parse()
        .unwrap();
    assert_eq!(length, whole.body().len());
    assert!(whole.body().ends_with(b"]}\n"));
    let list: Value = serde_json::from_slice(whole.body()).unwrap();
    assert_eq!(list["kind"], "PodList");
    let all = names(&list);
    assert_eq!(all.len(), 300);
    // Items of a built-in list carry no TypeMeta, as the API server writes them.
    assert!(list["items"][0].get("kind").is_none());

    let mut paged = Vec::new();
    let mut path = "/api/v1/pods?limit=128".to_string();
    loop {
        let page = c.get(&path).await.unwrap();
        assert_eq!(page.status, 200);
        paged.extend(names(&page.body));
        match page.body["metadata"]["continue"].as_str() {
            Some(token) => path = format!("/api/v1/pods?limit=128&continue={token}"),
            None => break,
        }
    }
    assert_eq!(paged, all);

    let gzipped = c
        .request_with_headers(
            Method::GET,
            "/api/v1/pods",
            &[("accept-encoding", "gzip")],
            "",
            "",
        )
        .await
        .unwrap();
    assert_eq!(gzipped.headers()[http::header::CONTENT_ENCODING], "gzip");
    let mut plain = Vec::new();
    flate2::read::GzDecoder::new(&gzipped.body()[..])
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(&plain[..], &whole.body()[..]);
}

#[tokio::test]
async fn expire_watches_cuts_watches_and_the_rewatch_gets_410() {
    let server = seeded(2).await;
    let c = client(&server);
    let list = c.get("/api/v1/pods").await.unwrap();
    let rv = list.body["metadata"]["resourceVersion"]
        .as_str()
        .unwrap()
        .to_string();
    let path = format!("/api/v1/pods?watch=true&resourceVersion={rv}");
    let mut watch = c.watch(&path).await.unwrap().unwrap();
    let refused = c.get("/testserver/expire-watches").await.unwrap();
    assert_eq!(refused.status, 405);
    let expired = c.post("/testserver/expire-watches", &Value::Null).await;
    let expired = expired.unwrap();
    assert_eq!(expired.status, 200);
    let now: u64 = expired.body["resourceVersion"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!(now > rv.parse().unwrap());
    // The open watch ends without another event.
    assert!(!matches!(watch.next().await, Some(Ok(_))));
    // A client that had seen everything is now behind the window.
    let mut rewatch = c.watch(&path).await.unwrap().unwrap();
    let event = rewatch.next().await.unwrap().unwrap();
    assert_eq!(event["type"], "ERROR");
    assert_eq!(event["object"]["code"], 410);
    // A fresh list still works, at the new revision.
    let relisted = c.get("/api/v1/pods").await.unwrap();
    assert_eq!(names(&relisted.body).len(), 2);
    assert_eq!(
        relisted.body["metadata"]["resourceVersion"],
        now.to_string()
    );
}
