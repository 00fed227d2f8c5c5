//! What the API server accepts in an Event (`pkg/apis/core/validation/events.go`), applied on
//! the client: over-long fields are truncated rather than rejected with a 422 that would lose
//! the whole event; a missing required field or a malformed reporting controller is an error.

use std::fmt::Write as _;

/// `NoteLengthLimit`: at most 1024 bytes of `note`.
pub const NOTE_LENGTH_LIMIT: usize = 1024;
/// `ReasonLengthLimit`.
pub const REASON_LENGTH_LIMIT: usize = 128;
/// `ActionLengthLimit`.
pub const ACTION_LENGTH_LIMIT: usize = 128;
/// `ReportingInstanceLengthLimit`.
pub const REPORTING_INSTANCE_LENGTH_LIMIT: usize = 128;

/// The longest prefix of `s` of at most `limit` bytes that ends on a character boundary (the
/// server counts bytes, as Go's `len` does).
pub(crate) fn truncate(s: &str, limit: usize) -> &str {
    if s.len() <= limit {
        return s;
    }
    let mut end = limit;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Writes `note` into a string of at most [`NOTE_LENGTH_LIMIT`] bytes, without formatting
/// more than needed of a long `format_args!`.
pub(crate) fn note_string(note: impl std::fmt::Display) -> String {
    struct Capped(String);
    impl std::fmt::Write for Capped {
        fn write_str(&mut self, s: &str) -> std::fmt::Result {
            let room = NOTE_LENGTH_LIMIT - self.0.len();
            self.0.push_str(truncate(s, room));
            if s.len() > room {
                return Err(std::fmt::Error); // full: stop formatting
            }
            Ok(())
        }
    }
    let mut out = Capped(String::new());
    let _ = write!(out, "{note}");
    out.0
}

/// Checks a reporting controller name: a Kubernetes qualified name (`[prefix/]name`, name at
/// most 63 characters of `[A-Za-z0-9-_.]` starting and ending alphanumeric, prefix a DNS
/// subdomain of at most 253), as `ValidateQualifiedName` requires.
pub(crate) fn validate_reporting_controller(s: &str) -> Result<(), String> {
    let (prefix, name) = match s.rsplit_once('/') {
        Some((p, n)) => (Some(p), n),
        None => (None, s),
    };
    if let Some(p) = prefix {
        let ok = !p.is_empty()
            && p.len() <= 253
            && p.split('.').all(|label| {
                !label.is_empty()
                    && label
                        .bytes()
                        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
                    && !label.starts_with('-')
                    && !label.ends_with('-')
            });
        if !ok {
            return Err(format!(
                "prefix {p:?} must be a lowercase DNS subdomain of at most 253 characters"
            ));
        }
    }
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    let ok = !name.is_empty()
        && name.len() <= 63
        && alnum(name.chars().next())
        && alnum(name.chars().last())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok {
        return Err(format!(
            "name {name:?} must be 1-63 characters of [A-Za-z0-9-_.], starting and ending \
             alphanumeric"
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truncates_on_character_boundaries() {
        assert_eq!(truncate("short", 128), "short");
        let long = "é".repeat(100); // 200 bytes
        let t = truncate(&long, 127);
        assert_eq!(t.len(), 126);
        assert!(t.chars().all(|c| c == 'é'));
    }

    #[test]
    fn a_note_is_capped_at_one_kibibyte() {
        let n = note_string(format_args!("{}-{}", "x".repeat(2000), 7));
        assert_eq!(n.len(), NOTE_LENGTH_LIMIT);
        assert_eq!(note_string("ok"), "ok");
        let emoji = note_string("😀".repeat(300)); // 4 bytes each
        assert_eq!(emoji.len(), 1024);
        let emoji = note_string(format_args!("a{}", "😀".repeat(300)));
        assert_eq!(emoji.len(), 1021);
    }

    #[test]
    fn reporting_controller_is_a_qualified_name() {
        for ok in ["sample-controller", "example.com/foo-ctl", "a", "A_b.c"] {
            assert_eq!(validate_reporting_controller(ok), Ok(()), "{ok}");
        }
        for bad in [
            "",
            "-x",
            "x-",
            "has space",
            "Bad.Prefix/x",
            "/x",
            &"a".repeat(64),
        ] {
            let e = validate_reporting_controller(bad).unwrap_err();
            assert!(e.contains("must be"), "{bad}: {e}");
        }
    }
}
