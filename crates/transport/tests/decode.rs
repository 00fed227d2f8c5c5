//! The list and watch decoders on hand-made byte streams, split at every byte boundary.

use std::collections::VecDeque;

use bytes::Bytes;
use futures_util::StreamExt;
use kcache_core::{DynamicObject, Object, WatchEvent};
use kcache_transport::decode::{ListDecoder, ListStream, WatchDecoder, WatchEventStream};

const EVENTS: &str = concat!(
    r#"{"type":"ADDED","object":{"metadata":{"name":"a","namespace":"n","resourceVersion":"1"},"data":{"k":"}{\"\\"}}}"#,
    "\n",
    r#"{"object":{"metadata":{"name":"a","resourceVersion":"2"}},"type":"MODIFIED"}"#,
    r#"  {"type":"DELETED","object":{"metadata":{"name":"a","resourceVersion":"3"}}}"#,
    r#"{"type":"BOOKMARK","object":{"kind":"ConfigMap","metadata":{"resourceVersion":"4","annotations":{"k8s.io/initial-events-end":"true"}}}}"#,
    r#"{"type":"BOOKMARK","object":{"metadata":{"resourceVersion":"5"}}}"#,
    "\r\n\t",
    r#"{"type":"ERROR","object":{"kind":"Status","apiVersion":"v1","status":"Failure","message":"too old resource version: 1 (5)","reason":"Expired","code":410}}"#,
    "\n"
);

fn check_events(evs: &[WatchEvent<DynamicObject>]) {
    let names: Vec<_> = evs.iter().map(|e| e.type_name()).collect();
    assert_eq!(
        names,
        ["ADDED", "MODIFIED", "DELETED", "BOOKMARK", "BOOKMARK", "ERROR"]
    );
    let WatchEvent::Added(a) = &evs[0] else {
        panic!()
    };
    assert_eq!(a.data["data"]["k"], "}{\"\\");
    assert_eq!(a.namespace(), Some("n"));
    let WatchEvent::Modified(m) = &evs[1] else {
        panic!()
    };
    assert_eq!(m.resource_version(), Some("2"));
    let WatchEvent::Bookmark(b) = &evs[3] else {
        panic!()
    };
    assert_eq!(
        (b.resource_version.as_str(), b.initial_events_end),
        ("4", true)
    );
    let WatchEvent::Bookmark(b) = &evs[4] else {
        panic!()
    };
    assert_eq!(
        (b.resource_version.as_str(), b.initial_events_end),
        ("5", false)
    );
    let WatchEvent::Error(s) = &evs[5] else {
        panic!()
    };
    assert!(s.is_gone() && s.message.contains("too old"));
}

fn decode_watch_split(
    input: &[u8],
    splits: &[usize],
) -> Result<Vec<WatchEvent<DynamicObject>>, kcache_core::Error> {
    let mut d = WatchDecoder::<DynamicObject>::new(1 << 20);
    let mut out = VecDeque::new();
    let mut prev = 0;
    for &s in splits.iter().chain(std::iter::once(&input.len())) {
        d.push(&input[prev..s], &mut out)?;
        prev = s;
    }
    d.finish()?;
    Ok(out.into_iter().collect())
}

#[test]
fn watch_events_decode_at_every_split() {
    let input = EVENTS.as_bytes();
    for split in 0..=input.len() {
        check_events(&decode_watch_split(input, &[split]).unwrap());
    }
    // And one byte at a time.
    let all: Vec<usize> = (1..input.len()).collect();
    check_events(&decode_watch_split(input, &all).unwrap());
}

#[test]
fn watch_rejects_unknown_types_truncation_garbage_and_oversize() {
    let unknown = br#"{"type":"FOO","object":{}}"#;
    let e = decode_watch_split(unknown, &[]).unwrap_err();
    assert!(
        e.to_string().contains("unknown watch event type \"FOO\""),
        "{e}"
    );
    // Object before type with an unknown type is reported the same way.
    let late = br#"{"object":{},"type":"BAR"}"#;
    assert!(decode_watch_split(late, &[])
        .unwrap_err()
        .to_string()
        .contains("\"BAR\""));
    let input = EVENTS.as_bytes();
    for cut in [1, 10, 100, input.len() - 3] {
        let e = decode_watch_split(&input[..cut], &[]).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{cut}: {e}");
    }
    let garbage = decode_watch_split(b"{\"type\":\"ADDED\",\"object\":{}} x", &[]).unwrap_err();
    assert!(
        garbage.to_string().contains("expected '{' at byte 29"),
        "{garbage}"
    );
    let malformed = decode_watch_split(br#"{"type":"ADDED","object":{"metadata":[}}"#, &[5]);
    assert!(matches!(malformed, Err(kcache_core::Error::Decode { .. })));
    // A string that is not UTF-8: serde_json's error, with where.
    let not_utf8 = decode_watch_split(b"{\"type\":\"ADDED\",\"object\":{\"k\":\"\xff\"}}", &[])
        .unwrap_err()
        .to_string();
    assert!(
        not_utf8.contains("watch event") && not_utf8.contains("invalid unicode"),
        "{not_utf8}"
    );
    let missing = decode_watch_split(br#"{"type":"ADDED"}"#, &[]).unwrap_err();
    assert!(
        missing.to_string().contains("missing field `object`"),
        "{missing}"
    );
    let mut d = WatchDecoder::<DynamicObject>::new(64);
    let big = format!(
        r#"{{"type":"ADDED","object":{{"data":"{}"}}}}"#,
        "x".repeat(100)
    );
    let mut out = VecDeque::new();
    d.push(&big.as_bytes()[..50], &mut out).unwrap();
    let e = d.push(&big.as_bytes()[50..], &mut out).unwrap_err();
    assert!(e.to_string().contains("maximum of 64 bytes"), "{e}");
    // The limit also applies to an event that arrives in one chunk.
    let mut d = WatchDecoder::<DynamicObject>::new(64);
    assert!(d.push(big.as_bytes(), &mut out).is_err());
}

#[tokio::test]
async fn watch_stream_ends_cleanly_skips_undecodable_events_and_ends_on_broken_framing() {
    let input = EVENTS.as_bytes();
    let chunks: Vec<Result<Bytes, std::io::Error>> = input
        .chunks(7)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let evs: Vec<_> =
        WatchEventStream::<_, DynamicObject>::new(futures_util::stream::iter(chunks), 1 << 20)
            .collect()
            .await;
    let evs: Vec<_> = evs.into_iter().map(Result::unwrap).collect();
    check_events(&evs);

    let bad: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(
            br#"{"type":"ADDED","object":{}}{"type":"NOPE","object":{}}"#,
        )),
        Ok(Bytes::from_static(br#"{"type":"ADDED","object":{}}"#)),
    ];
    let mut s = WatchEventStream::<_, DynamicObject>::new(futures_util::stream::iter(bad), 1 << 20);
    assert!(matches!(s.next().await, Some(Ok(WatchEvent::Added(_)))));
    assert!(matches!(
        s.next().await,
        Some(Err(kcache_core::Error::Decode { .. }))
    ));
    // A well-framed event that does not decode is one error item; the events after it follow.
    assert!(matches!(s.next().await, Some(Ok(WatchEvent::Added(_)))));
    assert!(s.next().await.is_none());

    // A byte that cannot start an event breaks the framing: one error, then the end.
    let unframed: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(br#"{"type":"ADDED","object":{}}]"#)),
        Ok(Bytes::from_static(br#"{"type":"ADDED","object":{}}"#)),
    ];
    let mut s =
        WatchEventStream::<_, DynamicObject>::new(futures_util::stream::iter(unframed), 1 << 20);
    assert!(matches!(s.next().await, Some(Ok(WatchEvent::Added(_)))));
    assert!(matches!(
        s.next().await,
        Some(Err(kcache_core::Error::Decode { .. }))
    ));
    assert!(s.next().await.is_none());

    let broken: Vec<Result<Bytes, std::io::Error>> = vec![
        Ok(Bytes::from_static(br#"{"type":"ADDED","object":{}}{"ty"#)),
        Err(std::io::Error::other("connection reset")),
    ];
    let mut s =
        WatchEventStream::<_, DynamicObject>::new(futures_util::stream::iter(broken), 1 << 20);
    assert!(matches!(s.next().await, Some(Ok(_))));
    let e = s.next().await.unwrap().unwrap_err();
    assert!(
        matches!(e, kcache_core::Error::Request(_))
            && kcache_core::ErrorChain(&e).to_string().contains("reset")
    );
}

/// A watch-list's burst: thousands of events arriving together decode in batches on the
/// runtime's workers (several at once), and still come out in body order, an undecodable one as an
/// error in its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_events_decodes_in_batches_in_body_order() {
    let mut body = String::new();
    for i in 0..5000 {
        if i == 2500 {
            body.push_str(r#"{"type":"NOPE","object":{}}"#);
        }
        let pad = "x".repeat(100);
        body.push_str(&format!(
            r#"{{"type":"ADDED","object":{{"metadata":{{"name":"o{i}","resourceVersion":"{i}"}},"data":{{"p":"{pad}"}}}}}}"#
        ));
    }
    // 64 KiB chunks, all ready at once, as a fast server's burst.
    let chunks: Vec<Result<Bytes, std::io::Error>> = body
        .as_bytes()
        .chunks(64 << 10)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let out: Vec<_> =
        WatchEventStream::<_, DynamicObject>::new(futures_util::stream::iter(chunks), 1 << 20)
            .collect()
            .await;
    assert_eq!(out.len(), 5001);
    let mut next = 0;
    for (at, ev) in out.into_iter().enumerate() {
        match ev {
            Ok(WatchEvent::Added(o)) => {
                assert_eq!(o.name(), format!("o{next}"));
                next += 1;
            }
            Err(e) => {
                assert_eq!(at, 2500, "the error is where the bad event was");
                assert!(e.to_string().contains("NOPE"), "{e}");
            }
            Ok(other) => panic!("unexpected {other:?}"),
        }
    }
    assert_eq!(next, 5000);
}

/// What has arrived goes out when the body has nothing more for now: a burst is not held back
/// waiting for a full batch, nor is a lone event after it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_go_out_when_the_body_waits() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
    let body = futures_util::stream::unfold(rx, |mut rx| async move {
        rx.recv().await.map(|chunk| (chunk, rx))
    });
    let mut s = Box::pin(WatchEventStream::<_, DynamicObject>::new(body, 1 << 20));
    /// The next item, polling only when the stream's waker was woken: a stream that answers
    /// `Pending` without arranging a wake-up fails here (the limit is a guard, not a timing).
    async fn next<S: futures_util::Stream + Unpin>(s: &mut S) -> Option<S::Item> {
        struct Wake(tokio::sync::Notify);
        impl futures_util::task::ArcWake for Wake {
            fn wake_by_ref(w: &std::sync::Arc<Self>) {
                w.0.notify_one();
            }
        }
        let wake = std::sync::Arc::new(Wake(tokio::sync::Notify::new()));
        let waker = futures_util::task::waker(wake.clone());
        let mut cx = std::task::Context::from_waker(&waker);
        loop {
            if let std::task::Poll::Ready(item) = s.poll_next_unpin(&mut cx) {
                return item;
            }
            tokio::time::timeout(std::time::Duration::from_secs(60), wake.0.notified())
                .await
                .expect("the stream answered Pending and never woke its task");
        }
    }
    let event = |i: usize| {
        format!(
            r#"{{"type":"ADDED","object":{{"metadata":{{"name":"o{i}"}},"data":{{"p":"{}"}}}}}}"#,
            "y".repeat(200)
        )
    };
    // 100 events, about 25 KiB: more than is decoded inline, less than a batch.
    let burst: String = (0..100).map(event).collect();
    tx.send(Ok(Bytes::from(burst))).unwrap();
    for i in 0..100 {
        let Some(Ok(WatchEvent::Added(o))) = next(&mut s).await else {
            panic!("event {i} did not come");
        };
        assert_eq!(o.name(), format!("o{i}"));
    }
    tx.send(Ok(Bytes::from(event(100)))).unwrap();
    let Some(Ok(WatchEvent::Added(o))) = next(&mut s).await else {
        panic!("the lone event did not come");
    };
    assert_eq!(o.name(), "o100");
    drop(tx);
    assert!(next(&mut s).await.is_none());
}

const LIST_META_FIRST: &str = r#"{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"42","continue":"tok","remainingItemCount":7},"items":[{"metadata":{"name":"a","namespace":"n"},"data":{"x":"]\"["}},{"metadata":{"name":"b"}} , {"metadata":{"name":"c"}}]}"#;
const LIST_META_LAST: &str = "{\n \"items\" : [ ] ,\"extra\": [1, {\"a\": null}], \"num\": 12.5e3, \"t\":true, \"metadata\" : {\"resourceVersion\":\"9\"}\n}\n";

fn decode_list_split(
    input: &[u8],
    splits: &[usize],
) -> Result<(Vec<DynamicObject>, kcache_core::ListMeta), kcache_core::Error> {
    let mut d = ListDecoder::<DynamicObject>::new(1 << 20);
    let mut out = VecDeque::new();
    let mut prev = 0;
    for &s in splits.iter().chain(std::iter::once(&input.len())) {
        d.push(&input[prev..s], &mut out)?;
        prev = s;
    }
    let meta = d.finish()?;
    Ok((out.into_iter().collect(), meta))
}

#[test]
fn list_decodes_at_every_split_with_metadata_before_or_after_items() {
    let input = LIST_META_FIRST.as_bytes();
    for split in 0..=input.len() {
        let (items, meta) = decode_list_split(input, &[split]).unwrap();
        let names: Vec<_> = items.iter().map(|o| o.name().to_string()).collect();
        assert_eq!(names, ["a", "b", "c"], "split {split}");
        assert_eq!(items[0].data["data"]["x"], "]\"[");
        assert_eq!(meta.resource_version.as_deref(), Some("42"));
        assert_eq!(meta.continue_.as_deref(), Some("tok"));
        assert_eq!(meta.remaining_item_count, Some(7));
    }
    let input = LIST_META_LAST.as_bytes();
    for split in 0..=input.len() {
        let (items, meta) = decode_list_split(input, &[split]).unwrap();
        assert!(items.is_empty());
        assert_eq!(meta.resource_version.as_deref(), Some("9"), "split {split}");
    }
    let all: Vec<usize> = (1..LIST_META_FIRST.len()).collect();
    assert_eq!(
        decode_list_split(LIST_META_FIRST.as_bytes(), &all)
            .unwrap()
            .0
            .len(),
        3
    );
    let (items, meta) = decode_list_split(br#"{"items":null}"#, &[]).unwrap();
    assert!(items.is_empty() && meta.resource_version.is_none());
}

#[test]
fn list_rejects_malformed_truncated_and_oversized_bodies() {
    let input = LIST_META_FIRST.as_bytes();
    for cut in 0..input.len() {
        let e = decode_list_split(&input[..cut], &[]).unwrap_err();
        assert!(matches!(e, kcache_core::Error::Decode { .. }), "{cut}");
    }
    let cases: &[(&[u8], &str)] = &[
        (b"[]", "expected '{' opening the list at byte 0"),
        (br#"{"items":{}}"#, "'[' opening items"),
        (br#"{"metadata":[]}"#, "'{' opening metadata"),
        (br#"{"items":[{}],}"#, "a key"),
        (br#"{"items":[{} {}]}"#, "',' or ']' after an item"),
        (br#"{"a" 1}"#, "':'"),
        (br#"{"items":[]} {}"#, "the end of the body"),
        (br#"{"items":[{"metadata":"x"}]}"#, "list item 0"),
        (br#"{"metadata":{"resourceVersion":5}}"#, "list metadata"),
        (b"{\"items\":[{},{\"k\":\"\xff\"}]}", "list item 1"),
        (
            b"{\"items\":[{},{\"k\":\"\xff\"}]}",
            "invalid unicode code point at line 1 column 7",
        ),
    ];
    for (input, want) in cases {
        let e = decode_list_split(input, &[]).unwrap_err().to_string();
        assert!(e.contains(want), "{}: {e}", String::from_utf8_lossy(input));
    }
    let mut d = ListDecoder::<DynamicObject>::new(32);
    let big = format!(
        r#"{{"items":[{{"metadata":{{"name":"{}"}}}}]}}"#,
        "n".repeat(40)
    );
    let e = d.push(big.as_bytes(), &mut VecDeque::new()).unwrap_err();
    assert!(
        e.to_string().contains("list item 0") && e.to_string().contains("maximum of 32"),
        "{e}"
    );
}

#[tokio::test]
async fn list_stream_hands_items_over_as_chunks_arrive() {
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Result<Bytes, std::io::Error>>();
    let body = tokio_stream_from(rx);
    let mut s = Box::pin(ListStream::<_, DynamicObject>::new(body, 1 << 20));
    tx.send(Ok(Bytes::from_static(
        br#"{"metadata":{"resourceVersion":"3"},"items":[{"metadata":{"name":"a"}},"#,
    )))
    .unwrap();
    // The first item is delivered before the rest of the body exists.
    let first = s.next().await.unwrap().unwrap();
    assert_eq!(first.name(), "a");
    assert_eq!(s.metadata().unwrap().resource_version.as_deref(), Some("3"));
    tx.send(Ok(Bytes::from_static(br#"{"metadata":{"name":"b"}}]}"#)))
        .unwrap();
    drop(tx);
    assert_eq!(s.next().await.unwrap().unwrap().name(), "b");
    assert!(s.next().await.is_none());
    assert_eq!(s.metadata().unwrap().resource_version.as_deref(), Some("3"));

    let chunks: Vec<Result<Bytes, std::io::Error>> =
        vec![Ok(Bytes::from_static(LIST_META_FIRST.as_bytes()))];
    let list = ListStream::<_, DynamicObject>::new(futures_util::stream::iter(chunks), 1 << 20)
        .into_list()
        .await
        .unwrap();
    assert_eq!(list.items.len(), 3);
    assert_eq!(list.continue_token(), Some("tok"));
}

fn tokio_stream_from<T: Send + 'static>(
    mut rx: tokio::sync::mpsc::UnboundedReceiver<T>,
) -> impl futures_core::Stream<Item = T> + Send {
    futures_util::stream::poll_fn(move |cx| rx.poll_recv(cx))
}
