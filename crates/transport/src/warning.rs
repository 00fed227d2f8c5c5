//! What the server warns about: kube-apiserver sends `Warning: 299 - "..."` headers (RFC 7234)
//! with answers to requests that use a deprecated API version, and admission webhooks add
//! their own. As in client-go (`rest.WarningHandler`, `handleWarnings`), every response's
//! warnings with code 299 and a text go to the client's [`WarningHandler`]: by default
//! [`WarningLogger`], which logs them; [`NoWarnings`] drops them; a closure
//! `Fn(code, agent, text)` does whatever the caller wants (kubectl's deduplicated stderr
//! writer, a metric). A malformed header is skipped and logged at debug level.

use std::fmt;

use http::HeaderMap;

/// Receives the server's warnings (client-go's `rest.WarningHandler`).
pub trait WarningHandler: Send + Sync + 'static {
    /// One warning: its code (always 299 here), agent (`-` from kube-apiserver) and text.
    fn handle_warning(&self, code: u16, agent: &str, text: &str);
}

impl<F> WarningHandler for F
where
    F: Fn(u16, &str, &str) + Send + Sync + 'static,
{
    fn handle_warning(&self, code: u16, agent: &str, text: &str) {
        self(code, agent, text)
    }
}

/// Logs each warning (`tracing::warn!`, target `kcache_transport::warning`), as client-go's
/// default `WarningLogger` does with klog. The default handler.
#[derive(Debug, Clone, Copy, Default)]
pub struct WarningLogger;

impl WarningHandler for WarningLogger {
    fn handle_warning(&self, _code: u16, _agent: &str, text: &str) {
        tracing::warn!(target: "kcache_transport::warning", "{text}");
    }
}

/// Drops every warning (client-go's `rest.NoWarnings`).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoWarnings;

impl WarningHandler for NoWarnings {
    fn handle_warning(&self, _code: u16, _agent: &str, _text: &str) {}
}

/// One parsed warning.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Warning {
    pub code: u16,
    pub agent: String,
    pub text: String,
}

/// Why a `Warning` header could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Malformed(String);

impl fmt::Display for Malformed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// A quoted-string at the start of `s`: its unescaped text and the rest after the closing
/// quote.
fn quoted(s: &str) -> Result<(String, &str), Malformed> {
    let body = s
        .strip_prefix('"')
        .ok_or_else(|| Malformed(format!("expected a quoted string at {s:?}")))?;
    let mut text = String::new();
    let mut chars = body.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((text, &body[i + 1..])),
            '\\' => match chars.next() {
                Some((_, e)) => text.push(e),
                None => break,
            },
            c => text.push(c),
        }
    }
    Err(Malformed(format!("unterminated quoted string in {s:?}")))
}

/// The warnings of one `Warning` header value: comma-separated `code agent "text" ["date"]`
/// (client-go's `ParseWarningHeader`, applied to each element).
pub(crate) fn parse(value: &str) -> Result<Vec<Warning>, Malformed> {
    let mut out = Vec::new();
    let mut rest = value.trim_start();
    while !rest.is_empty() {
        let (code, after) = rest
            .split_once(' ')
            .ok_or_else(|| Malformed(format!("no agent after the code in {value:?}")))?;
        let code: u16 = code
            .parse()
            .ok()
            .filter(|c| (100..1000).contains(c) && code.len() == 3)
            .ok_or_else(|| Malformed(format!("{code:?} is not a three-digit warning code")))?;
        let (agent, after) = after
            .split_once(' ')
            .ok_or_else(|| Malformed(format!("no text after the agent in {value:?}")))?;
        if agent.is_empty() {
            return Err(Malformed(format!("an empty agent in {value:?}")));
        }
        let (text, mut after) = quoted(after)?;
        if let Some(date) = after.strip_prefix(' ') {
            after = quoted(date)?.1;
        }
        out.push(Warning {
            code,
            agent: agent.to_string(),
            text,
        });
        after = after.trim_start();
        rest = match after.strip_prefix(',') {
            Some(next) => next.trim_start(),
            None if after.is_empty() => after,
            None => return Err(Malformed(format!("unexpected {after:?} in {value:?}"))),
        };
    }
    Ok(out)
}

/// Hands every 299 warning with a text in `headers` to `handler`.
pub(crate) fn handle(handler: &dyn WarningHandler, headers: &HeaderMap) {
    for value in headers.get_all(http::header::WARNING) {
        let Ok(value) = value.to_str() else {
            tracing::debug!("a Warning header that is not text was skipped");
            continue;
        };
        match parse(value) {
            Ok(warnings) => {
                for w in warnings
                    .iter()
                    .filter(|w| w.code == 299 && !w.text.is_empty())
                {
                    handler.handle_warning(w.code, &w.agent, &w.text);
                }
            }
            Err(e) => tracing::debug!("a malformed Warning header was skipped: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::{Arc, Mutex};

    fn w(code: u16, agent: &str, text: &str) -> Warning {
        Warning {
            code,
            agent: agent.into(),
            text: text.into(),
        }
    }

    // client-go's warnings_test.go `TestParseWarningHeader` / `TestParseWarningHeaders` cases.
    #[test]
    fn parses_what_client_go_parses() {
        assert_eq!(parse(r#"299 - "test""#), Ok(vec![w(299, "-", "test")]));
        assert_eq!(
            parse(r#"299 - "test \"quoted\" \\ backslash""#),
            Ok(vec![w(299, "-", r#"test "quoted" \ backslash"#)])
        );
        assert_eq!(
            parse(r#"299 - "with date" "Sat, 01 Jan 2000 00:00:00 GMT""#),
            Ok(vec![w(299, "-", "with date")])
        );
        assert_eq!(
            parse(r#"299 - "one", 299 agent "two""#),
            Ok(vec![w(299, "-", "one"), w(299, "agent", "two")])
        );
        assert_eq!(
            parse(r#"199 host:80 "other""#),
            Ok(vec![w(199, "host:80", "other")])
        );
    }

    #[test]
    fn refuses_what_is_not_a_warning() {
        for bad in [
            "",
            "299",
            "299 -",
            r#"2990 - "x""#,
            r#"29 - "x""#,
            r#"abc - "x""#,
            r#"299 - x"#,
            r#"299 - "unterminated"#,
            r#"299 - "x" trailing"#,
        ] {
            if bad.is_empty() {
                assert_eq!(parse(bad), Ok(vec![]));
            } else {
                assert!(parse(bad).is_err(), "{bad:?}");
            }
        }
    }

    #[test]
    fn only_299_warnings_with_a_text_reach_the_handler() {
        let seen = Arc::new(Mutex::new(Vec::new()));
        let s = seen.clone();
        let handler = move |code: u16, agent: &str, text: &str| {
            s.lock().unwrap().push(format!("{code} {agent} {text}"));
        };
        let mut headers = HeaderMap::new();
        for v in [
            r#"299 - "deprecated", 199 - "misc""#,
            r#"299 - """#,
            "garbage",
            r#"299 - "second""#,
        ] {
            headers.append(http::header::WARNING, v.parse().unwrap());
        }
        handle(&handler, &headers);
        assert_eq!(*seen.lock().unwrap(), ["299 - deprecated", "299 - second"]);
    }
}
