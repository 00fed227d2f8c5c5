//! The HTTP layer: the listener and its TLS, the router that takes a request through
//! authentication, injected faults and the body limit to a handler, and what every handler
//! answers with — query parsing, output negotiation, compression and `Status` errors worded
//! like kube-apiserver's. Faults are injected here, between the wire and the handlers, so a
//! client sees them exactly as it would see a real server's failures.

pub(crate) mod anonymous;
pub(crate) mod auth;
pub(crate) mod compress;
pub(crate) mod faults;
pub(crate) mod listener;
pub(crate) mod negotiation;
pub(crate) mod protobuf_body;
pub(crate) mod query;
pub(crate) mod responses;
pub(crate) mod router;
pub(crate) mod tls;
pub(crate) mod tokens;
