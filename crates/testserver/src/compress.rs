//! Response compression as kube-apiserver does it (`APIResponseCompression`, on by default since
//! 1.16; `responsewriters.deferredResponseWriter`): a serialized response larger than 128 KiB is
//! gzipped when the request's `Accept-Encoding` names `gzip`, with `Content-Encoding: gzip` and
//! `Vary: Accept-Encoding`. Watch streams are written straight to the connection by the API
//! server's watch handler and are never compressed; here, every streamed body (one with no
//! known length) is passed through.

use std::io::Write as _;

use http::{header, HeaderMap, HeaderValue, Response};
use http_body::Body as _;
use http_body_util::BodyExt;

use crate::responses::{full, Body};

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

/// Gzips `resp` when its body is a known size over the threshold.
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
    let bytes = match body.collect().await {
        Ok(c) => c.to_bytes(),
        Err(e) => {
            tracing::warn!("response body could not be read for compression: {e}");
            return Response::from_parts(parts, full(Vec::new()));
        }
    };
    // Level 1, as newer API servers use (kubernetes#112296): nearly the ratio of higher levels
    // for a fraction of the CPU.
    let mut enc = flate2::write::GzEncoder::new(
        Vec::with_capacity(bytes.len() / 4),
        flate2::Compression::fast(),
    );
    let compressed = enc.write_all(&bytes).and_then(|()| enc.finish());
    match compressed {
        Ok(out) => {
            parts.headers.remove(header::CONTENT_LENGTH);
            parts
                .headers
                .insert(header::CONTENT_ENCODING, HeaderValue::from_static("gzip"));
            parts
                .headers
                .append(header::VARY, HeaderValue::from_static("Accept-Encoding"));
            Response::from_parts(parts, full(out))
        }
        Err(e) => {
            tracing::warn!("gzip failed, sending the body uncompressed: {e}");
            Response::from_parts(parts, full(bytes))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
