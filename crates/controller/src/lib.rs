#![doc = include_str!("../README.md")]

mod runnable;

pub use runnable::{BoxFuture, Runnable};
