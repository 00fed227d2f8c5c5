//! An incremental JSON scanner: finds where one JSON value ends without parsing it, across any
//! number of body chunks, so values are decoded as soon as their last byte arrives.
//!
//! It tracks only what decides a value's end: nesting depth, whether it is inside a string, and
//! whether the previous byte was a backslash inside a string. Malformed content inside the value
//! is left to `serde_json`, which decodes the finished slice.

use kcache_core::Error;
use memchr::memchr2;

use super::naming::object_key_in;

/// Where the end of one JSON value is, fed chunk by chunk. Starts at the value's first byte.
#[derive(Debug, Default, Clone)]
pub(crate) struct ValueScanner {
    depth: u32,
    in_string: bool,
    escape: bool,
    scalar: bool,
    started: bool,
}

/// Whether a byte is JSON whitespace.
pub(crate) fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

impl ValueScanner {
    /// Scans `bytes` (the continuation of the value); returns the index one past the value's last
    /// byte when the value ends inside `bytes`. A bare scalar (number, `true`, ...) ends before the
    /// first delimiter, which is not part of it.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Option<usize> {
        let mut i = 0;
        if !self.started && !bytes.is_empty() {
            self.started = true;
            match bytes[0] {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth = 1,
                _ => self.scalar = true,
            }
            i = 1;
        }
        while i < bytes.len() {
            if self.in_string {
                if self.escape {
                    self.escape = false;
                    i += 1;
                    continue;
                }
                let off = memchr2(b'"', b'\\', &bytes[i..])?;
                i += off;
                if bytes[i] == b'\\' {
                    self.escape = true;
                } else {
                    self.in_string = false;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                i += 1;
                continue;
            }
            let b = bytes[i];
            if self.scalar {
                if is_ws(b) || matches!(b, b',' | b']' | b'}') {
                    return Some(i);
                }
                i += 1;
                continue;
            }
            match b {
                b'"' => self.in_string = true,
                b'{' | b'[' => self.depth += 1,
                b'}' | b']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        return Some(i + 1);
                    }
                }
                _ => {}
            }
            i += 1;
        }
        None
    }

    /// Whether the value is complete when the input ends here (only a bare scalar can be).
    pub(crate) fn complete_at_end(&self) -> bool {
        self.scalar
    }
}

/// A value being captured: scanned, and copied into a buffer only while it spans chunks.
#[derive(Debug, Default)]
pub(crate) struct Capture {
    scanner: ValueScanner,
    buf: Vec<u8>,
}

/// A captured value that exceeded the size limit: its size so far, and the `namespace/name`
/// its first bytes reveal.
#[derive(Debug)]
pub(crate) struct TooLarge(pub(crate) usize, pub(crate) Option<String>);

impl Capture {
    /// Feeds the continuation of the value. On completion returns the whole value (borrowed from
    /// `rest` when it never spanned chunks) and how many bytes of `rest` it used.
    pub(crate) fn feed<'a>(
        &'a mut self,
        rest: &'a [u8],
        limit: usize,
    ) -> Result<Option<(&'a [u8], usize)>, TooLarge> {
        match self.scanner.feed(rest) {
            Some(end) => {
                let total = self.buf.len() + end;
                if total > limit {
                    return Err(self.too_large(total, rest));
                }
                if self.buf.is_empty() {
                    Ok(Some((&rest[..end], end)))
                } else {
                    self.buf.extend_from_slice(&rest[..end]);
                    Ok(Some((&self.buf, end)))
                }
            }
            None => {
                let total = self.buf.len() + rest.len();
                if total > limit {
                    return Err(self.too_large(total, rest));
                }
                self.buf.extend_from_slice(rest);
                Ok(None)
            }
        }
    }

    /// The error of a value grown to `total` bytes, named from its first bytes.
    fn too_large(&self, total: usize, rest: &[u8]) -> TooLarge {
        let key = if self.buf.len() >= 4096 {
            object_key_in(&self.buf)
        } else {
            let mut head = self.buf.clone();
            head.extend_from_slice(&rest[..rest.len().min(4096 - head.len())]);
            object_key_in(&head)
        };
        TooLarge(total, key)
    }

    /// Whether a value has started and not yet ended.
    pub(crate) fn in_progress(&self) -> bool {
        self.scanner.started
    }

    /// Forgets the finished value, keeping the buffer's allocation for the next one.
    pub(crate) fn reset(&mut self) {
        self.scanner = ValueScanner::default();
        self.buf.clear();
    }
}

/// The error of a value over the size limit, for either decoder.
pub(crate) fn too_large(what: &str, TooLarge(size, key): TooLarge, limit: usize) -> Error {
    let what = match key {
        Some(key) => format!("{what} {key:?}"),
        None => what.to_string(),
    };
    Error::decode(
        what,
        format!("object larger than the maximum of {limit} bytes (at least {size} bytes)"),
    )
}

/// The error of a byte that cannot stand where it does, naming its offset in the body.
pub(crate) fn unexpected_byte(what: &str, at: u64, found: u8, expected: &str) -> Error {
    Error::decode(
        what,
        format!(
            "expected {expected} at byte {at}, found {:?}",
            char::from(found)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn end_of(input: &[u8], split: usize) -> Option<usize> {
        let mut s = ValueScanner::default();
        let (a, b) = input.split_at(split);
        if let Some(e) = s.feed(a) {
            return Some(e);
        }
        s.feed(b).map(|e| e + a.len())
    }

    #[test]
    fn finds_value_ends_at_every_split() {
        let cases: &[(&[u8], usize)] = &[
            (br#"{"a":"}\"{","b":[1,{"c":"]"}]} tail"#, 30),
            (br#""str\\"rest"#, 7),
            (br#"[[],{}],"#, 7),
            (b"12345,", 5),
            (b"true}", 4),
            (br#"{"k":"\\\\"}x"#, 12),
        ];
        for (input, want) in cases {
            for split in 0..=input.len() {
                assert_eq!(
                    end_of(input, split),
                    Some(*want),
                    "{} split at {split}",
                    String::from_utf8_lossy(input)
                );
            }
        }
    }

    #[test]
    fn incomplete_values_stay_open() {
        let mut s = ValueScanner::default();
        assert_eq!(s.feed(br#"{"a":"}"#), None);
        assert!(!s.complete_at_end());
        let mut n = ValueScanner::default();
        assert_eq!(n.feed(b"123"), None);
        assert!(n.complete_at_end());
    }

    #[test]
    fn capture_borrows_when_whole_and_limits_size() {
        let mut c = Capture::default();
        let (v, used) = c.feed(b"{}  ", 10).unwrap().unwrap();
        assert_eq!((v, used), (&b"{}"[..], 2));
        c.reset();
        assert!(c.feed(b"{\"a\":", 10).unwrap().is_none());
        assert!(c.in_progress());
        let (v, used) = c.feed(b"1}", 10).unwrap().unwrap();
        assert_eq!((v, used), (&b"{\"a\":1}"[..], 2));
        c.reset();
        assert!(matches!(
            c.feed(b"{\"aaaaaaaaaa\":1}", 10),
            Err(TooLarge(16, None))
        ));
    }
}
