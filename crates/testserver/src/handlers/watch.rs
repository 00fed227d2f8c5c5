//! Watch: a chunked stream of `{"type":...,"object":...}` lines. As the API server flushes only
//! when no further event is ready, events already queued (a watch-list's initial events, a
//! burst) go out together, in writes of up to [`COALESCE`] bytes; a lone event goes out at once.

use std::collections::VecDeque;
use std::pin::Pin;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use futures_util::StreamExt;
use http::{header, Response, StatusCode};
use http_body::Frame;
use http_body_util::{BodyExt, StreamBody};
use kcache_core::{Status, INITIAL_EVENTS_END_ANNOTATION};
use serde_json::{json, Value};
use tokio::sync::broadcast;
use tokio::time::{Interval, Sleep};

use super::options::{self, options_invalid};
use super::read::parse_rv;
use super::Target;
use crate::http::faults::WatchControl;
use crate::http::query::Query;
use crate::http::responses::{full, ApiError, ApiResult, Body, Streamed};
use crate::resources::{conversion, ResourceInfo};
use crate::state::ServerState;
use crate::storage::{frame, Delivery, Registration, Storage, WatchStart};

/// The most bytes of queued events written at once (the API server's writes during a burst are
/// its response buffer's size, a few KiB).
const COALESCE: usize = 32 * 1024;

/// Bytes written by the malformed-watch fault: not JSON, so every decoder must fail on them.
pub(crate) const MALFORMED: &[u8] = b"{\"type\":\"ADDED\",\"object\":{this is not json}}\n";

fn forbidden(field: &str, msg: &str) -> ApiError {
    options_invalid("ListOptions", vec![options::forbidden(field, msg)])
}

/// GET with `watch=true`.
pub(crate) fn watch(state: &Arc<ServerState>, t: &Target, q: &Query) -> ApiResult {
    let filter = Arc::new(t.filter(q, &state.config)?);
    let bookmarks = q.flag("allowWatchBookmarks");
    let send_initial = q.opt_flag("sendInitialEvents");
    q.int("limit")?;
    let timeout = q.int("timeoutSeconds")?;
    let rv_match = q.get("resourceVersionMatch");
    match send_initial {
        Some(_) if rv_match != Some("NotOlderThan") => {
            return Err(forbidden(
                "resourceVersionMatch",
                "sendInitialEvents requires setting resourceVersionMatch to NotOlderThan",
            ))
        }
        Some(true) if !bookmarks => {
            return Err(forbidden(
                "allowWatchBookmarks",
                "sendInitialEvents requires allowWatchBookmarks=true",
            ))
        }
        None if rv_match.is_some() => {
            return Err(forbidden(
                "resourceVersionMatch",
                "resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided",
            ))
        }
        _ => {}
    }
    let rv = match q.get("resourceVersion") {
        None | Some("0") => None,
        Some(n) => Some(parse_rv(n)?),
    };
    let start = match (send_initial, rv) {
        (Some(true), _) | (None, None) => WatchStart::State,
        (_, Some(n)) => WatchStart::After(n),
        (Some(false), None) => WatchStart::After(state.storage.current_rev()),
    };
    // As the API server: 0 or none is the server's default, a negative one ends at once.
    let timeout = match timeout {
        Some(s) if s > 0 => Duration::from_secs(s.unsigned_abs()),
        Some(s) if s < 0 => Duration::ZERO,
        _ => state.config.default_watch_timeout,
    };
    let reg = match state.storage.watch(&t.res, filter, start) {
        Ok(reg) => reg,
        Err(too_old) => {
            let status = Status::failure(
                410,
                "Expired",
                format!(
                    "too old resource version: {} ({})",
                    rv.unwrap_or(0),
                    too_old.oldest
                ),
            );
            let body = ApiError::from(status).body();
            let bytes = frame("ERROR", &crate::wire::to_vec(&body));
            return Ok(stream_response(full(bytes)));
        }
    };
    let floor = rv.unwrap_or(0);
    let stream = WatchStream::new(
        state,
        &t.res,
        reg,
        bookmarks,
        send_initial == Some(true),
        floor,
        timeout,
    );
    let body = futures_util::stream::unfold(stream, |mut s| async move {
        s.next().await.map(|item| (item, s))
    })
    .map(|r| r.map(Frame::data));
    Ok(stream_response(StreamBody::new(body).boxed_unsync()))
}

fn stream_response(body: Body) -> Response<Body> {
    let mut resp = Response::builder()
        .status(StatusCode::OK)
        .header(header::CONTENT_TYPE, "application/json")
        .body(body)
        .expect("static headers are valid");
    resp.extensions_mut().insert(Streamed);
    resp
}

enum Out {
    Event(Delivery),
    Raw(Bytes),
}

/// One open watch: the queued output, the live buffer and the timers.
struct WatchStream {
    storage: Arc<Storage>,
    res: Arc<ResourceInfo>,
    reg: Registration,
    queue: VecDeque<Out>,
    control: broadcast::Receiver<WatchControl>,
    bookmarks: Option<Interval>,
    deadline: Pin<Box<Sleep>>,
    /// Bookmarks never report less than the resourceVersion the client started from.
    floor: u64,
    half_next: bool,
    abort_next: bool,
}

impl WatchStream {
    fn new(
        state: &ServerState,
        res: &Arc<ResourceInfo>,
        mut reg: Registration,
        bookmarks: bool,
        initial_end: bool,
        floor: u64,
        timeout: Duration,
    ) -> Self {
        let mut queue: VecDeque<Out> = std::mem::take(&mut reg.initial)
            .into_iter()
            .map(Out::Event)
            .collect();
        if initial_end {
            queue.push_back(Out::Raw(bookmark(res, reg.rev, true)));
        }
        let every = state.config.bookmark_interval;
        WatchStream {
            storage: state.storage.clone(),
            res: res.clone(),
            reg,
            queue,
            control: state.watch_control.subscribe(),
            bookmarks: bookmarks
                .then(|| tokio::time::interval_at(tokio::time::Instant::now() + every, every)),
            deadline: Box::pin(tokio::time::sleep(timeout)),
            floor,
            half_next: false,
            abort_next: false,
        }
    }

    fn render(&self, out: Out) -> Bytes {
        match out {
            Out::Event((event, emit)) => {
                conversion::present_frame(&self.res, event.frame(emit, &self.res.fields))
            }
            Out::Raw(b) => b,
        }
    }

    /// Queues everything already sent to this watcher, then a bookmark at the revision it has
    /// fully seen.
    fn queue_bookmark(&mut self) {
        let queue = &mut self.queue;
        let rev = self
            .storage
            .progress(&mut self.reg.rx, |d| queue.push_back(Out::Event(d)));
        if rev >= self.floor {
            self.queue
                .push_back(Out::Raw(bookmark(&self.res, rev, false)));
        }
    }

    async fn next(&mut self) -> Option<Result<Bytes, std::io::Error>> {
        loop {
            if std::mem::take(&mut self.abort_next) {
                return Some(Err(cut("the connection was cut in the middle of an event")));
            }
            if let Some(out) = self.queue.pop_front() {
                let bytes = self.render(out);
                if std::mem::take(&mut self.half_next) {
                    self.abort_next = true;
                    return Some(Ok(bytes.slice(..bytes.len() / 2)));
                }
                if self.queue.is_empty() {
                    return Some(Ok(bytes));
                }
                let mut burst = BytesMut::from(bytes);
                while burst.len() < COALESCE {
                    let Some(out) = self.queue.pop_front() else {
                        break;
                    };
                    burst.extend_from_slice(&self.render(out));
                }
                return Some(Ok(burst.freeze()));
            }
            tokio::select! {
                biased;
                ctl = self.control.recv() => match ctl {
                    Ok(WatchControl::Cut) => return Some(Err(cut("watch streams were cut"))),
                    Ok(WatchControl::HalfObject) => {
                        self.half_next = true;
                        self.queue_bookmark();
                    }
                    Ok(WatchControl::Malformed) => return Some(Ok(Bytes::from_static(MALFORMED))),
                    Ok(WatchControl::Bookmark) => self.queue_bookmark(),
                    Err(broadcast::error::RecvError::Lagged(_)) => {}
                    Err(broadcast::error::RecvError::Closed) => self.control = broadcast::channel(1).1,
                },
                _ = &mut self.deadline => return None,
                d = self.reg.rx.recv() => match d {
                    Some(d) => self.queue.push_back(Out::Event(d)),
                    None => {
                        if self.reg.dropped_slow.load(Ordering::Acquire) {
                            tracing::info!("watch closed: the client did not keep up");
                        }
                        return None;
                    }
                },
                _ = tick(&mut self.bookmarks) => self.queue_bookmark(),
            }
        }
    }
}

async fn tick(i: &mut Option<Interval>) {
    match i {
        Some(i) => {
            i.tick().await;
        }
        None => std::future::pending().await,
    }
}

fn cut(what: &str) -> std::io::Error {
    std::io::Error::new(
        std::io::ErrorKind::ConnectionAborted,
        format!("kcache-testserver fault: {what}"),
    )
}

/// A BOOKMARK frame: only kind, apiVersion and resourceVersion (plus the end-of-initial-events
/// annotation for watch-list). A built-in type's empty `creationTimestamp` is a Go struct
/// written as `null`; a custom resource's unstructured bookmark has no such field.
fn bookmark(res: &ResourceInfo, rv: u64, initial_end: bool) -> Bytes {
    let mut meta = json!({"resourceVersion": rv.to_string()});
    if res.builtin {
        meta["creationTimestamp"] = Value::Null;
    }
    if initial_end {
        meta["annotations"] = json!({INITIAL_EVENTS_END_ANNOTATION: "true"});
    }
    let obj = json!({"kind": res.api.kind, "apiVersion": res.api.api_version(), "metadata": meta});
    frame("BOOKMARK", &crate::wire::to_vec(&obj))
}
