#![doc = include_str!("../README.md")]
//!
//! # Modules at a glance
//!
//! - [`TokenBucket`]: client-go's `tokenBucketRateLimiter` (`throttle.go`): `TryAccept`,
//!   `Accept`, `Wait`, plus `Reserve` as `golang.org/x/time/rate` offers it.
//! - [`Error`]: why a rate could not be built, naming the bad value.

mod error;
mod token_bucket;

pub use error::Error;
pub use token_bucket::TokenBucket;
