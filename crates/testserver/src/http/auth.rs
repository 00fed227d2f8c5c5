//! Bearer-token authentication (`--token-auth-file` of the real server, with one token).

use http::{header, HeaderMap};

use crate::http::responses::ApiError;

/// Accepts the request if no token is configured or it carries `Authorization: Bearer <token>`.
pub(crate) fn check(token: Option<&str>, headers: &HeaderMap) -> Result<(), ApiError> {
    let Some(token) = token else {
        return Ok(());
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .map(str::trim);
    if given == Some(token) {
        Ok(())
    } else {
        Err(ApiError::unauthorized())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requires_the_exact_token() {
        let mut h = HeaderMap::new();
        assert!(check(None, &h).is_ok());
        assert_eq!(check(Some("t"), &h).unwrap_err().status.code, 401);
        h.insert(header::AUTHORIZATION, "Bearer nope".parse().unwrap());
        assert!(check(Some("t"), &h).is_err());
        h.insert(header::AUTHORIZATION, "Bearer t".parse().unwrap());
        assert!(check(Some("t"), &h).is_ok());
    }
}
