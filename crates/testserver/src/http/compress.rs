//! Response compression as kube-apiserver does it (`APIResponseCompression`, on by default since
//! 1.16; `responsewriters.deferredResponseWriter`): a serialized response larger than 128 KiB is
//! gzipped when the request's `Accept-Encoding` names `gzip`, with `Content-Encoding: gzip` and
//! `Vary: Accept-Encoding`. Watch streams are written straight to the connection by the API
//! server's watch handler and are never compressed; here, every streamed body of no known
//! length is passed through. A list (streamed, of known length) is compressed as it streams.

use std::io::Write as _;
use std::pin::Pin;
use std::task::{ready, Context, Poll};

use bytes::Bytes;
use flate2::write::GzEncoder;
use http::{header, HeaderMap, HeaderValue, Response};
use http_body::{Body as _, Frame};
use http_body_util::BodyExt;

use crate::http::responses::Body;

/// Bodies of at most this many bytes are sent as they are (`defaultGzipThresholdBytes`).
pub(crate) const GZIP_THRESHOLD: usize = 128 * 1024;

/// Whether the request asks for gzip: a `gzip` token in the first `Accept-Encoding` header, as
/// the API server's `negotiateContentEncoding` reads it (no q-values).
pub(crate) fn accepts_gzip(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|t| t.trim() == "gzip"))
}

/// Gzips `resp` when its body is a known size over the threshold. The body is compressed as it
/// streams (a large list is never held whole, compressed or not).
pub(crate) async fn gzip(resp: Response<Body>) -> Response<Body> {
    let large = resp
        .body()
        .size_hint()
        .exact()
        .is_some_and(|n| n > GZIP_THRESHOLD as u64);
    if !large {
        return resp;
    }
    let (mut parts, body) = resp.into_parts();
    parts.headers.remove(header::CONTENT_LENGTH);
    parts
        .headers
        .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
    parts
        .headers
        .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
    // Level 1, as newer API servers use (kubernetes#112296): nearly the ratio of higher levels
    // for a fraction of the CPU.
    let encoder = GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let body = GzipBody {
        inner: body,
        encoder: Some(encoder),
    };
    Response::from_parts(parts, body.boxed_unsync())
}

/// A body gzipped frame by frame.
struct GzipBody {
    inner: Body,
    /// `None` once the trailer is written.
    encoder: Option<GzEncoder<Vec<u8>>>,
}

impl http_body::Body for GzipBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
        let this = self.get_mut();
        loop {
            let Some(encoder) = this.encoder.as_mut() else {
                return Poll::Ready(None);
            };
            match ready!(Pin::new(&mut this.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else {
                        continue;
                    };
                    encoder.write_all(&data)?;
                    let out = std::mem::take(encoder.get_mut());
                    if !out.is_empty() {
                        return Poll::Ready(Some(Ok(Frame::data(out.into()))));
                    }
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(e))),
                None => {
                    let encoder = this.encoder.take().expect("checked above");
                    let out = encoder.finish()?;
                    return Poll::Ready(Some(Ok(Frame::data(out.into()))));
                }
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.encoder.is_none()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::responses::full;

    #[test]
    fn reads_accept_encoding_as_the_api_server() {
        let h = |v: &str| {
            let mut m = HeaderMap::new();
            m.insert(header::ACCEPT_ENCODING, v.parse().unwrap());
            accepts_gzip(&m)
        };
        assert!(h("gzip"));
        assert!(h("deflate, gzip"));
        assert!(!h("gzip;q=1.0"));
        assert!(!h("br"));
        assert!(!accepts_gzip(&HeaderMap::new()));
    }

    #[tokio::test]
    async fn compresses_large_bodies_only() {
        let small = gzip(Response::new(full(vec![b'a'; GZIP_THRESHOLD]))).await;
        assert!(small.headers().get(header::CONTENT_ENCODING).is_none());
        let large = gzip(Response::new(full(vec![b'a'; GZIP_THRESHOLD + 1]))).await;
        assert_eq!(large.headers()[header::CONTENT_ENCODING], "gzip");
        assert_eq!(large.headers()[header::VARY], "Accept-Encoding");
        let body = large.into_body().collect().await.unwrap().to_bytes();
        let mut plain = Vec::new();
        std::io::Read::read_to_end(&mut flate2::read::GzDecoder::new(&body[..]), &mut plain)
            .unwrap();
        assert_eq!(plain, vec![b'a'; GZIP_THRESHOLD + 1]);
    }
}
