//! Exact copies (`with_trim(exact_copy)`, what `Api::with_exact_copies` asks for): what a list or watch decodes is handed out with every `Vec` at its exact
//! length (serde grows a decoded `Vec` by doubling), on each decoding path — items decoded on
//! the reading task, in batches as tasks of their own, through the item `Stream`, into `Arc`s
//! (`into_shared_list`), and watch events alone or in a burst.

use bytes::Bytes;
use futures_util::StreamExt;
use k8s_openapi::api::core::v1::ConfigMap;
use kcache_core::WatchEvent;
use kcache_transport::decode::{exact_copy, ListStream, WatchEventStream};

/// A ConfigMap with one managedFields entry and one finalizer, as kube-apiserver sends them.
fn config_map(i: usize) -> String {
    format!(
        r#"{{"metadata":{{"name":"cm-{i}","namespace":"ns","resourceVersion":"{i}","finalizers":["f"],"managedFields":[{{"manager":"m","operation":"Update","apiVersion":"v1","fieldsType":"FieldsV1","fieldsV1":{{"f:data":{{".":{{}},"f:k":{{}}}}}}}}]}},"data":{{"k":"{}"}}}}"#,
        "v".repeat(100)
    )
}

fn list_body(n: usize) -> Bytes {
    let items: Vec<String> = (0..n).map(config_map).collect();
    Bytes::from(format!(
        r#"{{"kind":"ConfigMapList","metadata":{{"resourceVersion":"9"}},"items":[{}]}}"#,
        items.join(",")
    ))
}

fn watch_body(n: usize) -> Bytes {
    let events: Vec<String> = (0..n)
        .map(|i| format!(r#"{{"type":"ADDED","object":{}}}"#, config_map(i)))
        .collect();
    Bytes::from(events.join("\n"))
}

fn one_chunk(
    body: Bytes,
) -> impl futures_core::Stream<Item = Result<Bytes, std::io::Error>> + Send + 'static {
    futures_util::stream::iter([Ok(body)])
}

/// Whether every `Vec` the test objects carry is at its exact length.
fn exact(cm: &ConfigMap) -> bool {
    let mf = cm.metadata.managed_fields.as_ref().unwrap();
    let finalizers = cm.metadata.finalizers.as_ref().unwrap();
    mf.capacity() == mf.len() && finalizers.capacity() == finalizers.len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_hand_out_exact_copies_on_every_path() {
    // 2 items decode on the reading task, 3,000 (≈ 1.3 MB) in batches on the pool.
    for n in [2, 3000] {
        let plain = ListStream::<_, ConfigMap>::new(one_chunk(list_body(n)), 1 << 20)
            .into_list()
            .await
            .unwrap();
        assert!(
            plain.items.iter().all(|cm| !exact(cm)),
            "serde leaves room to spare, or this test shows nothing"
        );
        let list = ListStream::<_, ConfigMap>::new(one_chunk(list_body(n)), 1 << 20)
            .with_trim(exact_copy)
            .into_list()
            .await
            .unwrap();
        assert_eq!(list.items.len(), n);
        assert_eq!(list.items, plain.items);
        assert!(list.items.iter().all(exact), "{n} items");
        // What the reflector lists with: each item in its Arc where it was decoded.
        let shared = ListStream::<_, ConfigMap>::new(one_chunk(list_body(n)), 1 << 20)
            .with_trim(exact_copy)
            .into_shared_list()
            .await
            .unwrap();
        assert_eq!(shared.metadata, plain.metadata);
        assert!(shared.items.iter().map(|cm| &**cm).eq(plain.items.iter()));
        assert!(shared.items.iter().all(|cm| exact(cm)), "{n} shared items");
    }
    let streamed: Vec<ConfigMap> = ListStream::new(one_chunk(list_body(3)), 1 << 20)
        .with_trim(exact_copy)
        .map(Result::unwrap)
        .collect()
        .await;
    assert_eq!(streamed.len(), 3);
    assert!(streamed.iter().all(exact));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn watches_hand_out_exact_copies_alone_and_in_bursts() {
    // One event decodes on the reading task; 1,000 (≈ 450 KB together) in batches on the pool.
    for n in [1, 1000] {
        let events: Vec<_> =
            WatchEventStream::<_, ConfigMap>::new(one_chunk(watch_body(n)), 1 << 20)
                .with_trim(exact_copy)
                .map(Result::unwrap)
                .collect()
                .await;
        assert_eq!(events.len(), n);
        for (i, ev) in events.iter().enumerate() {
            let WatchEvent::Added(cm) = ev else {
                panic!("{ev:?}")
            };
            assert_eq!(
                cm.metadata.name.as_deref(),
                Some(format!("cm-{i}").as_str())
            );
            assert!(exact(cm), "event {i} of {n}");
        }
    }
}
