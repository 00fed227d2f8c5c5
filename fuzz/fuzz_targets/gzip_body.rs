//! Gzip response bodies on arbitrary bytes, the compressed stream split at arbitrary points,
//! then read by the watch decoder as a watch body would be: nothing panics, no decompressed
//! chunk passes `DECODED_CHUNK`, and how the compressed bytes were split changes neither the
//! decompressed bytes nor the events (an undecodable event in its place, up to a broken framing).
#![no_main]

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
    block_on(async {
        while let Some(chunk) = body.next().await {
            match chunk {
                Ok(chunk) => {
                    assert!(chunk.len() <= DECODED_CHUNK, "{} bytes", chunk.len());
                    plain.extend_from_slice(&chunk);
                    if !broken {
                        // An event that does not decode is an "error" and the body goes on; a
                        // broken framing ends it.
                        broken = decoder
                            .push_each(&chunk, &mut |ev| {
                                events.push(ev.map_or_else(
                                    |_| "error".to_string(),
                                    |e| e.type_name().to_string(),
                                ))
                            })
                            .is_err();
                        if broken {
                            events.push("broken".to_string());
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
    assert_eq!(whole.1, pieces.1, "a corrupt stream fails however it is split");
    if whole.1 {
        // What came out before the error depends on where the reads ended (an error drops the
        // output of the read it happens in; a watch then re-watches from its last event), but it
        // is a prefix of the same bytes.
        let n = whole.0.len().min(pieces.0.len());
        assert_eq!(whole.0[..n], pieces.0[..n]);
        return;
    }
    assert_eq!(whole.0, pieces.0);
    assert_eq!(whole.2, pieces.2);
});
