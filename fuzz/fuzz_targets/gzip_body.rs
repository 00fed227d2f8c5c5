//! Gzip response bodies on arbitrary bytes, the compressed stream split at arbitrary points,
//! then read by the watch decoder as a watch body would be: nothing panics, no decompressed
//! chunk passes `DECODED_CHUNK`, and how the compressed bytes were split changes neither the
//! decompressed bytes nor the events (decoded up to the decoder's first error).
#![no_main]

use std::collections::VecDeque;

use bytes::Bytes;
use futures::executor::block_on;
use futures::StreamExt;
use kcache_core::DynamicObject;
use kcache_transport::decode::WatchDecoder;
use kcache_transport::{gunzip, DECODED_CHUNK};
use libfuzzer_sys::fuzz_target;

/// How many decompressed bytes are read at most (a small input can inflate to gigabytes).
const CAP: usize = 1 << 20;

/// The decompressed bytes (or the error's place) and the events decoded from them.
fn read(data: &[u8], step: usize) -> (Vec<u8>, bool, Vec<String>) {
    let chunks: Vec<std::io::Result<Bytes>> = data
        .chunks(step)
        .map(|c| Ok(Bytes::copy_from_slice(c)))
        .collect();
    let mut body = gunzip(futures::stream::iter(chunks));
    let mut plain = Vec::new();
    let mut failed = false;
    let mut decoder = WatchDecoder::<DynamicObject>::new(64 * 1024);
    let mut events = Vec::new();
    let mut broken = false;
    let mut out = VecDeque::new();
    block_on(async {
        while let Some(chunk) = body.next().await {
            match chunk {
                Ok(chunk) => {
                    assert!(chunk.len() <= DECODED_CHUNK, "{} bytes", chunk.len());
                    plain.extend_from_slice(&chunk);
                    if !broken {
                        broken = decoder.push(&chunk, &mut out).is_err();
                        events.extend(out.drain(..).map(|e| e.type_name().to_string()));
                        if broken {
                            events.push("error".to_string());
                        }
                    }
                    if plain.len() > CAP {
                        break;
                    }
                }
                Err(_) => {
                    failed = true;
                    break;
                }
            }
        }
    });
    (plain, failed, events)
}

fuzz_target!(|input: &[u8]| {
    let Some((&step, data)) = input.split_first() else {
        return;
    };
    let whole = read(data, data.len().max(1));
    let pieces = read(data, usize::from(step).max(1));
    if whole.0.len() > CAP || pieces.0.len() > CAP {
        // Stopped at the cap, at a chunk boundary that depends on the split.
        let n = whole.0.len().min(pieces.0.len()).min(CAP);
        assert_eq!(whole.0[..n], pieces.0[..n]);
        return;
    }
    assert_eq!(whole.0, pieces.0);
    assert_eq!(whole.1, pieces.1);
    assert_eq!(whole.2, pieces.2);
});
