//! Bearer-token authentication (`--token-auth-file` of the real server, with one token, and its
//! default `--anonymous-auth`): a wrong bearer token is 401 on every path, and a request with no
//! bearer token runs as the anonymous user (see [`super::anonymous`]).

use http::{header, HeaderMap};

use crate::http::responses::ApiError;

/// Who a request runs as.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Caller {
    /// The server's one user (or anyone, when no token is configured).
    User,
    /// A request without a bearer token to a server that checks tokens.
    Anonymous,
}

/// Authenticates the request: the user if no token is configured or it carries
/// `Authorization: Bearer <token>`, anonymous if it carries no bearer token, else 401.
pub(crate) fn authenticate(token: Option<&str>, headers: &HeaderMap) -> Result<Caller, ApiError> {
    let Some(token) = token else {
        return Ok(Caller::User);
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim)
        .filter(|t| !t.is_empty());
    match given {
        None => Ok(Caller::Anonymous),
        Some(t) if t == token => Ok(Caller::User),
        Some(_) => Err(ApiError::unauthorized()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_the_exact_token_or_none() {
        let mut h = HeaderMap::new();
        assert_eq!(authenticate(None, &h).unwrap(), Caller::User);
        assert_eq!(authenticate(Some("t"), &h).unwrap(), Caller::Anonymous);
        h.insert(header::AUTHORIZATION, "Basic Zm9vOmJhcg==".parse().unwrap());
        assert_eq!(authenticate(Some("t"), &h).unwrap(), Caller::Anonymous);
        h.insert(header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        let e = authenticate(Some("t"), &h).unwrap_err();
        assert_eq!(e.status.code, 401);
        h.insert(header::AUTHORIZATION, "Bearer t".parse().unwrap());
        assert_eq!(authenticate(Some("t"), &h).unwrap(), Caller::User);
    }
}
