//! controller-runtime's `client.IgnoreNotFound`.

use crate::Error;

/// `result` with a 404 turned into `Ok(None)`: a controller deleting (or reading) what may
/// already be gone treats "not there" as done, not as an error to retry — controller-runtime's
/// `client.IgnoreNotFound(err)`, instead of a `match` around every such call. `Ok(v)` becomes
/// `Ok(Some(v))`; any other error is returned unchanged.
pub fn ignore_not_found<T>(result: Result<T, Error>) -> Result<Option<T>, Error> {
    match result {
        Ok(v) => Ok(Some(v)),
        Err(e) if e.is_not_found() => Ok(None),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Status;

    fn failed(code: u16, reason: &str) -> Result<u8, Error> {
        Err(Status::failure(code, reason, "x").into())
    }

    #[test]
    fn only_not_found_becomes_none() {
        assert_eq!(ignore_not_found(Ok(7)).unwrap(), Some(7));
        assert_eq!(ignore_not_found(failed(404, "NotFound")).unwrap(), None);
        let conflict = ignore_not_found(failed(409, "Conflict")).unwrap_err();
        assert!(conflict.is_conflict());
        let cancelled = ignore_not_found::<u8>(Err(Error::Cancelled));
        assert!(matches!(cancelled, Err(Error::Cancelled)));
    }
}
