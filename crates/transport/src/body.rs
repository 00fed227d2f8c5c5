//! Response bodies as the decoders read them: the bytes as sent, or gunzipped while they
//! arrive (`Content-Encoding: gzip`, which the client asks for as client-go's transport does,
//! unless [`Config::asks_for_gzip`](crate::Config::asks_for_gzip) says otherwise).
//!
//! Decompression is streaming and yields at most [`DECODED_CHUNK`] bytes at a time, so the list
//! and watch decoders' bound ([`Config::max_object_size`](crate::Config::max_object_size))
//! holds on the decompressed bytes: a small compressed body that inflates to gigabytes is
//! refused once one object grows past the bound, never inflated whole.

use std::pin::Pin;
use std::task::{Context, Poll};

use async_compression::tokio::bufread::GzipDecoder;
use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use futures_util::TryStreamExt;
use http::header::CONTENT_ENCODING;
use http::Response;
use http_body_util::BodyDataStream;
use hyper::body::Incoming;
use kcache_core::{BoxError, Error};

use tokio_util::io::{ReaderStream, StreamReader};

/// The most decompressed bytes handed to a decoder at once.
pub const DECODED_CHUNK: usize = 64 * 1024;

type Compressed =
    futures_util::stream::MapErr<BodyDataStream<Incoming>, fn(hyper::Error) -> std::io::Error>;

pin_project_lite::pin_project! {
    /// A response body: a stream of byte chunks, gunzipped if the server compressed it.
    pub struct ResponseBody {
        #[pin]
        inner: Inner,
    }
}

pin_project_lite::pin_project! {
    #[project = InnerProj]
    enum Inner {
        Plain { #[pin] body: BodyDataStream<Incoming> },
        Gzip { #[pin] body: ReaderStream<GzipDecoder<StreamReader<Compressed, Bytes>>> },
    }
}

impl std::fmt::Debug for ResponseBody {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let encoding = match self.inner {
            Inner::Plain { .. } => "identity",
            Inner::Gzip { .. } => "gzip",
        };
        f.debug_struct("ResponseBody")
            .field("encoding", &encoding)
            .finish()
    }
}

fn io_error(e: hyper::Error) -> std::io::Error {
    std::io::Error::other(e)
}

/// A gzip stream (`compressed`'s chunks) decompressed as response bodies are: concatenated
/// members read as one stream, as Go's gzip reader does, and at most [`DECODED_CHUNK`] bytes
/// at a time.
pub fn gunzip<S>(compressed: S) -> ReaderStream<GzipDecoder<StreamReader<S, Bytes>>>
where
    S: Stream<Item = std::io::Result<Bytes>>,
{
    let mut decoder = GzipDecoder::new(StreamReader::new(compressed));
    decoder.multiple_members(true);
    ReaderStream::with_capacity(decoder, DECODED_CHUNK)
}

impl ResponseBody {
    /// The body of `resp`, decoded as its `Content-Encoding` says (`gzip` or none).
    pub(crate) fn of(resp: Response<Incoming>) -> Result<ResponseBody, Error> {
        let encoding = resp
            .headers()
            .get(CONTENT_ENCODING)
            .map(|v| v.to_str().unwrap_or("?").trim().to_ascii_lowercase());
        let body = BodyDataStream::new(resp.into_body());
        match encoding.as_deref() {
            None | Some("" | "identity") => Ok(ResponseBody {
                inner: Inner::Plain { body },
            }),
            Some("gzip") => {
                let compressed: Compressed = body.map_err(io_error as fn(_) -> _);
                Ok(ResponseBody {
                    inner: Inner::Gzip {
                        body: gunzip(compressed),
                    },
                })
            }
            Some(other) => Err(Error::Request(
                format!("the server answered with Content-Encoding {other:?}, which kcache does not decode")
                    .into(),
            )),
        }
    }

    /// Reads the whole body, failing once it passes `limit` decoded bytes.
    pub(crate) async fn read_to_end(self, limit: usize) -> Result<Bytes, Error> {
        let mut body = std::pin::pin!(self);
        let mut out = BytesMut::new();
        while let Some(chunk) = futures_util::StreamExt::next(&mut body).await {
            let chunk = chunk.map_err(Error::Request)?;
            if out.len() + chunk.len() > limit {
                return Err(Error::Request(
                    format!("the response body is larger than the limit of {limit} bytes").into(),
                ));
            }
            out.extend_from_slice(&chunk);
        }
        Ok(out.freeze())
    }
}

impl Stream for ResponseBody {
    type Item = Result<Bytes, BoxError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        match self.project().inner.project() {
            InnerProj::Plain { body } => body
                .poll_next(cx)
                .map(|o| o.map(|r| r.map_err(BoxError::from))),
            InnerProj::Gzip { body } => body.poll_next(cx).map(|o| {
                o.map(|r| {
                    r.map_err(|e| -> BoxError {
                        format!("cannot decompress the gzip response body: {e}").into()
                    })
                })
            }),
        }
    }
}
