//! Fault injection through the in-process handle (embedded server only: a real cluster has no
//! fault handle).

use crate::common;

use std::time::Duration;

use common::*;
use kcache_testserver::{Failure, RequestMatch, ServerConfig, TestServer, Verb};
use serde_json::json;

#[tokio::test]
async fn failures_delays_and_retry_after() {
    let c = cluster().await;
    let Some(server) = c.server() else {
        return skip(
            "failures_delays_and_retry_after",
            "fault injection needs the embedded server",
        );
    };
    let ns = c.create_namespace("faults").await.unwrap();
    server.fail_next(
        1,
        RequestMatch::any().verb(Verb::List).resource("configmaps"),
        Failure::TooManyRequests {
            retry_after_seconds: 2,
        },
    );
    server.fail_next(
        1,
        RequestMatch::any().verb(Verb::List),
        Failure::ServiceUnavailable {
            retry_after_seconds: 1,
        },
    );
    server.fail_next(
        1,
        RequestMatch::any().path_contains(&ns),
        Failure::InternalError,
    );
    server.fail_next(
        1,
        RequestMatch::any().verb(Verb::List),
        Failure::TooLargeResourceVersion,
    );
    let get = |c: &kcache_testing::TestCluster| {
        let path = cms(&ns);
        let client = c.client().clone();
        async move { client.get(&path).await.unwrap() }
    };
    let r = get(&c).await;
    assert_eq!(r.status, 429);
    assert_eq!(r.headers["retry-after"], "2");
    assert_eq!(r.body["details"]["retryAfterSeconds"], 2);
    let r = get(&c).await;
    assert_eq!(
        (
            r.status.as_u16(),
            r.headers["retry-after"].to_str().unwrap()
        ),
        (503, "1")
    );
    assert_eq!(get(&c).await.status, 500);
    let r = get(&c).await;
    assert_eq!(r.status, 504);
    assert_eq!(
        r.body["details"]["causes"][0]["reason"],
        "ResourceVersionTooLarge"
    );
    assert_eq!(get(&c).await.status, 200, "the rules are used up");

    server.delay(
        RequestMatch::any().path_contains(&ns),
        Duration::from_millis(200),
    );
    let start = std::time::Instant::now();
    assert_eq!(get(&c).await.status, 200);
    assert!(start.elapsed() >= Duration::from_millis(200));
    server.clear_faults();
}

#[tokio::test]
async fn watch_disruptions_are_errors_on_the_client() {
    let c = cluster().await;
    let Some(server) = c.server() else {
        return skip(
            "watch_disruptions_are_errors_on_the_client",
            "fault injection needs the embedded server",
        );
    };
    let ns = c.create_namespace("disrupt").await.unwrap();
    let obj = create_cm(&c, &ns, "a", json!({})).await;
    let open = || {
        let path = format!("{}?watch=true&resourceVersion={}", cms(&ns), rv(&obj));
        let client = c.client().clone();
        async move { client.watch(&path).await.unwrap().unwrap() }
    };
    let wait_watchers = |n: usize| async move {
        while server.watcher_count() < n {
            tokio::task::yield_now().await;
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    };

    let mut w = open().await;
    wait_watchers(1).await;
    server.cut_watches();
    assert!(
        w.next().await.unwrap().is_err(),
        "a cut watch is a connection error"
    );

    let mut w = open().await;
    wait_watchers(1).await;
    server.close_watches_mid_object();
    let err = w.next().await.unwrap().unwrap_err().to_string();
    assert!(!err.is_empty());

    let mut w = open().await;
    wait_watchers(1).await;
    server.send_malformed_on_watches();
    assert!(w
        .next()
        .await
        .unwrap()
        .unwrap_err()
        .to_string()
        .contains("watch decode"));

    let mut w = open().await;
    wait_watchers(1).await;
    server.send_bookmarks();
    let bm = w.next().await.unwrap().unwrap();
    assert_eq!(
        bm["type"], "BOOKMARK",
        "allowed or not, an on-demand bookmark goes out"
    );
}

#[tokio::test]
async fn compaction_expires_old_watches_and_continue_tokens() {
    let c = cluster().await;
    let Some(server) = c.server() else {
        return skip(
            "compaction_expires_old_watches_and_continue_tokens",
            "fault injection needs the embedded server",
        );
    };
    let ns = c.create_namespace("compact").await.unwrap();
    let a = create_cm(&c, &ns, "a", json!({})).await;
    create_cm(&c, &ns, "b", json!({})).await;
    let p1 = c
        .client()
        .get(&format!("{}?limit=1", cms(&ns)))
        .await
        .unwrap()
        .body;
    let token = p1["metadata"]["continue"].as_str().unwrap().to_string();
    create_cm(&c, &ns, "c", json!({})).await;
    server.compact_history();
    let expired = c
        .client()
        .get(&format!("{}?limit=1&continue={token}", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(expired.status, 410);
    assert!(expired.body["message"]
        .as_str()
        .unwrap()
        .starts_with("The provided continue parameter is too old"));
    // The inconsistent token continues at the current state.
    let again = expired.body["metadata"]["continue"].as_str().unwrap();
    let rest = c
        .client()
        .get(&format!("{}?continue={again}", cms(&ns)))
        .await
        .unwrap();
    assert_eq!(names(&rest.body), ["b", "c"]);
    let exact = c
        .client()
        .get(&format!(
            "{}?resourceVersion={}&resourceVersionMatch=Exact",
            cms(&ns),
            rv(&a)
        ))
        .await
        .unwrap();
    assert_eq!(exact.status, 410);
    let mut w = c
        .client()
        .watch(&format!(
            "{}?watch=true&resourceVersion={}",
            cms(&ns),
            rv(&a)
        ))
        .await
        .unwrap()
        .unwrap();
    let ev = w.next().await.unwrap().unwrap();
    assert_eq!(ev["object"]["code"], 410);
}

#[tokio::test]
async fn restart_keeps_data_and_port() {
    let server = TestServer::start(ServerConfig::default()).await.unwrap();
    let client = kcache_testing::RawClient::new(&server.base_url(), None, None).unwrap();
    client
        .post(
            "/api/v1/namespaces/default/configmaps",
            &cm("kept", json!({})),
        )
        .await
        .unwrap();
    let mut w = client
        .watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(w.next().await.unwrap().unwrap()["type"], "ADDED");
    let addr = server.addr();
    server.restart().await.unwrap();
    assert!(
        w.next().await.is_none_or(|r| r.is_err()),
        "the watch connection is gone"
    );
    assert_eq!(server.addr(), addr);
    let got = client
        .get("/api/v1/namespaces/default/configmaps/kept")
        .await
        .unwrap();
    assert_eq!(got.status, 200);
}

#[tokio::test]
async fn a_slow_watcher_is_closed_without_blocking_writers() {
    let server = TestServer::start(ServerConfig {
        watcher_buffer: 4,
        ..ServerConfig::default()
    })
    .await
    .unwrap();
    let client = kcache_testing::RawClient::new(&server.base_url(), None, None).unwrap();
    let _slow = client
        .watch("/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=1")
        .await
        .unwrap()
        .unwrap();
    while server.watcher_count() < 1 {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    // Nobody reads `_slow`; writes still complete, and the watcher gets dropped once its
    // buffer (and the socket's) is full.
    let big = "x".repeat(64 * 1024);
    for i in 0..200 {
        let r = client
            .post(
                "/api/v1/namespaces/default/configmaps",
                &json!({"metadata": {"name": format!("c{i}")}, "data": {"k": big}}),
            )
            .await
            .unwrap();
        assert_eq!(r.status, 201);
    }
    assert_eq!(server.watcher_count(), 0);
}
