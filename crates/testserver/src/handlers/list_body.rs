//! A list response streamed from the stored objects: the body is written chunk by chunk as the
//! connection takes it, so serving a million pods never builds the whole response (the store's
//! JSON of each item is copied into one chunk at a time). Its exact length is known up front,
//! so it still goes out with a `Content-Length` (and gzip, when asked, streams too).

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::{BufMut, Bytes, BytesMut};
use http_body::{Frame, SizeHint};

use crate::storage::Stored;

/// Bytes of items gathered into one chunk.
const CHUNK: usize = 256 * 1024;

/// `head`, the items separated by commas, then `tail`.
pub(crate) struct ListBody {
    head: Option<Bytes>,
    items: std::vec::IntoIter<Arc<Stored>>,
    /// `{"kind":"...","apiVersion":"...",` stripped from each item (built-in list items are
    /// written without their TypeMeta).
    strip: Option<String>,
    first: bool,
    tail: Option<Bytes>,
    remaining: u64,
}

impl ListBody {
    pub(crate) fn new(
        head: Bytes,
        items: Vec<Arc<Stored>>,
        strip: Option<String>,
        tail: Bytes,
    ) -> Self {
        let mut len = (head.len() + tail.len() + items.len().saturating_sub(1)) as u64;
        for o in &items {
            len += match without_type_meta(&o.json, strip.as_deref()) {
                Some(rest) => 1 + rest.len(),
                None => o.json.len(),
            } as u64;
        }
        ListBody {
            head: Some(head),
            items: items.into_iter(),
            strip,
            first: true,
            tail: Some(tail),
            remaining: len,
        }
    }
}

/// An item's JSON after the `strip` prefix, when it starts with it (the caller writes the `{`
/// back).
fn without_type_meta<'a>(json: &'a [u8], strip: Option<&str>) -> Option<&'a [u8]> {
    strip.and_then(|p| json.strip_prefix(p.as_bytes()))
}

impl http_body::Body for ListBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        let mut buf = BytesMut::with_capacity(CHUNK + 8 * 1024);
        if let Some(head) = this.head.take() {
            buf.put_slice(&head);
        }
        while buf.len() < CHUNK {
            let Some(o) = this.items.next() else {
                if let Some(tail) = this.tail.take() {
                    buf.put_slice(&tail);
                }
                break;
            };
            if !std::mem::take(&mut this.first) {
                buf.put_u8(b',');
            }
            match without_type_meta(&o.json, this.strip.as_deref()) {
                Some(rest) => {
                    buf.put_u8(b'{');
                    buf.put_slice(rest);
                }
                None => buf.put_slice(&o.json),
            }
        }
        if buf.is_empty() {
            return Poll::Ready(None);
        }
        this.remaining = this.remaining.saturating_sub(buf.len() as u64);
        Poll::Ready(Some(Ok(Frame::data(buf.freeze()))))
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0 && self.tail.is_none()
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body::Body as _;
    use http_body_util::BodyExt;
    use serde_json::json;

    fn stored(i: usize) -> Arc<Stored> {
        let value = json!({"kind": "Pod", "apiVersion": "v1",
            "metadata": {"name": format!("p{i}"), "namespace": "ns", "resourceVersion": "7"},
            "spec": {"padding": "x".repeat(1000)}});
        Arc::new(Stored::new(&value, 7, &[]))
    }

    #[tokio::test]
    async fn streams_bounded_chunks_that_add_up_to_the_announced_length() {
        let items: Vec<_> = (0..1000).map(stored).collect();
        let strip = Some("{\"kind\":\"Pod\",\"apiVersion\":\"v1\",".to_string());
        let mut body = ListBody::new(
            Bytes::from_static(b"{\"items\":["),
            items,
            strip,
            Bytes::from_static(b"]}\n"),
        );
        let announced = body.size_hint().exact().unwrap();
        let mut out = Vec::new();
        let mut chunks = 0;
        while let Some(frame) = body.frame().await {
            let data = frame.unwrap().into_data().unwrap();
            assert!(data.len() < CHUNK + 2 * 1024, "a chunk of {}", data.len());
            out.extend_from_slice(&data);
            chunks += 1;
        }
        assert!(body.is_end_stream());
        assert!(chunks > 3, "{chunks} chunks");
        assert_eq!(out.len() as u64, announced);
        let list: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let items = list["items"].as_array().unwrap();
        assert_eq!(items.len(), 1000);
        assert_eq!(items[999]["metadata"]["name"], "p999");
        assert!(items[0].get("kind").is_none());
    }

    #[tokio::test]
    async fn an_empty_list_is_head_and_tail() {
        let body = ListBody::new(
            Bytes::from_static(b"{\"items\":["),
            Vec::new(),
            None,
            Bytes::from_static(b"]}\n"),
        );
        assert_eq!(body.size_hint().exact(), Some(13));
        let out = body.collect().await.unwrap().to_bytes();
        assert_eq!(&out[..], b"{\"items\":[]}\n");
    }
}
