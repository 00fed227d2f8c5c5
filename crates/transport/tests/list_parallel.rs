//! `ListStream::into_list` on lists large enough to be decoded in batches on the other cores:
//! the items, their order, the metadata and the first error in body order are what decoding one
//! item at a time gives.

use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use bytes::Bytes;
use futures_util::StreamExt;
use kcache_core::{DynamicObject, Object};
use kcache_transport::decode::ListStream;

/// Enough items (≈ 300 bytes of JSON each) for several 256 KiB batches.
const N: usize = 5000;

/// A list of `n` items; items named in `bad` carry `"metadata": 5`, which no object decodes.
fn list_body(n: usize, bad: &[usize], tail: &str) -> String {
    let items: Vec<String> = (0..n)
        .map(|i| {
            if bad.contains(&i) {
                return r#"{"metadata":5}"#.to_string();
            }
            format!(
                r#"{{"metadata":{{"name":"o-{i}","namespace":"ns","resourceVersion":"{i}"}},"data":{{"pad":"{}"}}}}"#,
                "x".repeat(200 + i % 50)
            )
        })
        .collect();
    format!(
        r#"{{"kind":"List","metadata":{{"resourceVersion":"77","continue":"c"}},"items":[{}]{tail}"#,
        items.join(",")
    )
}

/// `body` in chunks of an odd size, so items straddle chunks.
fn chunked(body: String) -> impl futures_core::Stream<Item = Result<Bytes, std::io::Error>> {
    let bytes = Bytes::from(body);
    let chunks: Vec<_> = (0..bytes.len())
        .step_by(4093)
        .map(|at| Ok(bytes.slice(at..(at + 4093).min(bytes.len()))))
        .collect();
    futures_util::stream::iter(chunks)
}

fn stream(
    body: String,
) -> ListStream<impl futures_core::Stream<Item = Result<Bytes, std::io::Error>>, DynamicObject> {
    ListStream::new(chunked(body), 1 << 20)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn large_lists_keep_their_order_and_metadata() {
    let body = list_body(N, &[], "}");
    assert!(
        body.len() > 4 * (256 << 10),
        "the list spans several batches"
    );
    let list = stream(body.clone()).into_list().await.unwrap();
    assert_eq!(list.items.len(), N);
    for (i, item) in list.items.iter().enumerate() {
        assert_eq!(item.name(), format!("o-{i}"));
    }
    assert_eq!(list.metadata.resource_version.as_deref(), Some("77"));
    assert_eq!(list.continue_token(), Some("c"));

    // The same items as the one-at-a-time stream.
    let one_by_one: Vec<DynamicObject> = stream(body).map(|item| item.unwrap()).collect().await;
    assert_eq!(one_by_one, list.items);
}

/// A current-thread runtime has no other worker: its batches decode on the blocking pool, in
/// the same order, with the same first error.
#[tokio::test(flavor = "current_thread")]
async fn on_a_current_thread_runtime_batches_decode_on_the_blocking_pool_in_order() {
    let list = stream(list_body(N, &[], "}")).into_list().await.unwrap();
    assert_eq!(list.items.len(), N);
    for (i, item) in list.items.iter().enumerate() {
        assert_eq!(item.name(), format!("o-{i}"));
    }
    let e = stream(list_body(N, &[4200, 1500], "}"))
        .into_list()
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains("list item 1500"), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_first_bad_item_in_body_order_is_the_error() {
    // Bad items in a late batch and an earlier one, then a broken end of body: the earliest
    // bad item is reported, whichever batch finishes decoding first.
    let body = list_body(N, &[4200, 1500, 4900], "}trailing");
    let e = stream(body).into_list().await.unwrap_err().to_string();
    assert!(e.contains("list item 1500"), "{e}");

    // One bad item in the very last, locally decoded part.
    let e = stream(list_body(N, &[N - 1], "}"))
        .into_list()
        .await
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("list item {}", N - 1)), "{e}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_body_after_good_items_is_the_error() {
    let truncated = list_body(N, &[], "");
    let e = stream(truncated).into_list().await.unwrap_err().to_string();
    assert!(e.contains("body ended before the list did"), "{e}");

    let stray = list_body(N, &[], "}x");
    let e = stream(stray).into_list().await.unwrap_err().to_string();
    assert!(e.contains("the end of the body"), "{e}");
}

/// Polls a future to completion on this thread, with no runtime.
fn block_on<F: std::future::Future>(f: F) -> F::Output {
    struct Unpark(std::thread::Thread);
    impl Wake for Unpark {
        fn wake(self: Arc<Self>) {
            self.0.unpark();
        }
    }
    let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
    let mut cx = Context::from_waker(&waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let Poll::Ready(out) = f.as_mut().poll(&mut cx) {
            return out;
        }
        std::thread::park();
    }
}

#[test]
fn without_a_runtime_large_lists_decode_in_place() {
    let list = block_on(stream(list_body(N, &[], "}")).into_list()).unwrap();
    assert_eq!(list.items.len(), N);
    assert_eq!(list.items[N - 1].name(), format!("o-{}", N - 1));
    let e = block_on(stream(list_body(N, &[3000], "}")).into_list()).unwrap_err();
    assert!(e.to_string().contains("list item 3000"), "{e}");
}

#[tokio::test]
async fn a_partly_read_stream_keeps_what_it_ended_with() {
    // The one chunk completes item 0, then breaks: the failure is found while item 0 is read.
    let body = r#"{"metadata":{"resourceVersion":"1"},"items":[{"metadata":{"name":"a"}}x"#;
    let mut s = stream(body.to_string());
    assert_eq!(s.next().await.unwrap().unwrap().name(), "a");
    let e = s.into_list().await.unwrap_err().to_string();
    assert!(e.contains("found 'x'"), "{e}");

    // Read to a clean end: the rest of the list (nothing) and its metadata.
    let mut s = stream(
        r#"{"metadata":{"resourceVersion":"9"},"items":[{"metadata":{"name":"a"}}]}"#.to_string(),
    );
    assert_eq!(s.next().await.unwrap().unwrap().name(), "a");
    assert!(s.next().await.is_none());
    let list = s.into_list().await.unwrap();
    assert!(list.items.is_empty());
    assert_eq!(list.metadata.resource_version.as_deref(), Some("9"));
}
