//! The string `format`s kube-apiserver 1.20's schema validator checks (go-openapi's `strfmt`
//! registry): a string that does not parse as its format is refused with
//! `must be of type <format>`. Number formats (`int32`, `int64`, `float`, `double`) are not
//! range-checked there, and neither are they here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use base64::Engine;
use regex::Regex;

static DATE_TIME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\d{4}-\d{2}-\d{2})[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")
        .expect("a valid pattern")
});
static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
        .expect("a valid pattern")
});
static MAC: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"(?i)^[0-9a-f]{2}([:-])[0-9a-f]{2}(?:[:-][0-9a-f]{2}){4}$")
        .expect("a valid pattern")
});
static DURATION_GO: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[+-]?(\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)((\d+(\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h))*$",
    )
    .expect("a valid pattern")
});
static DURATION_WORDS: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^(\d+)\s*(ns|us|µs|ms|s|m|h|d|w|nanoseconds?|microseconds?|milliseconds?|seconds?|sec|minutes?|mins?|hours?|hr|days?|weeks?|wk)$")
        .expect("a valid pattern")
});

/// Whether `s` is valid as `format`; formats this validator does not know always are.
pub(super) fn valid(format: &str, s: &str) -> bool {
    match format {
        "date-time" => DATE_TIME.captures(s).is_some_and(|c| valid_date(&c[1])),
        "date" => valid_date(s),
        "byte" => base64::engine::general_purpose::STANDARD.decode(s).is_ok(),
        "uuid" | "uuid3" | "uuid4" | "uuid5" => UUID.is_match(s),
        "email" => valid_email(s),
        "hostname" => valid_hostname(s),
        "ipv4" => s.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => s.parse::<Ipv6Addr>().is_ok(),
        "cidr" => valid_cidr(s),
        "mac" => MAC.is_match(s),
        "duration" => DURATION_GO.is_match(s) || DURATION_WORDS.is_match(s) || s == "0",
        _ => true,
    }
}

/// `YYYY-MM-DD` naming a real day.
fn valid_date(s: &str) -> bool {
    let parts: Vec<&str> = s.split('-').collect();
    let [y, m, d] = parts[..] else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 {
        return false;
    }
    let (Ok(y), Ok(m), Ok(d)) = (y.parse::<u32>(), m.parse::<u32>(), d.parse::<u32>()) else {
        return false;
    };
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

fn valid_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && !domain.is_empty()
        && !s.chars().any(char::is_whitespace)
        && !domain.starts_with('.')
        && !domain.ends_with('.')
}

/// RFC 1123 host names: dot-separated labels of letters, digits and inner hyphens.
fn valid_hostname(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 255
        && s.trim_end_matches('.').split('.').all(|label| {
            let b = label.as_bytes();
            !b.is_empty()
                && b.len() <= 63
                && b.iter().all(|c| c.is_ascii_alphanumeric() || *c == b'-')
                && b[0] != b'-'
                && b[b.len() - 1] != b'-'
        })
}

fn valid_cidr(s: &str) -> bool {
    let Some((ip, prefix)) = s.split_once('/') else {
        return false;
    };
    let Ok(prefix) = prefix.parse::<u8>() else {
        return false;
    };
    match ip.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => prefix <= 32,
        Ok(IpAddr::V6(_)) => prefix <= 128,
        Err(_) => false,
    }
}

#[cfg(test)]
mod tests {
    use super::valid;

    #[test]
    fn formats_the_real_server_refuses() {
        for (format, bad) in [
            ("date-time", "yesterday"),
            ("date-time", "2021-02-30T00:00:00Z"),
            ("date", "x"),
            ("byte", "!!"),
            ("uuid", "nope"),
            ("email", "nope"),
            ("hostname", "-x-"),
            ("ipv4", "300.1.1.1"),
            ("cidr", "1.2.3.4"),
            ("duration", "forever"),
        ] {
            assert!(!valid(format, bad), "{format} {bad}");
        }
        for (format, good) in [
            ("date-time", "2021-01-02T03:04:05Z"),
            ("date-time", "2021-01-02T03:04:05.123+01:00"),
            ("date", "2020-02-29"),
            ("byte", "aGVsbG8="),
            ("uuid", "123e4567-e89b-12d3-a456-426614174000"),
            ("email", "a@b.c"),
            ("hostname", "a-b.example"),
            ("ipv4", "10.0.0.1"),
            ("ipv6", "::1"),
            ("cidr", "10.0.0.0/8"),
            ("duration", "1h30m"),
            ("duration", "3 days"),
            ("int32", "anything"),
        ] {
            assert!(valid(format, good), "{format} {good}");
        }
    }
}
