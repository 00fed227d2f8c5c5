//! Controller names are unique among the controllers running in a process (controller-runtime
//! checks at build time): names label metrics and logs, and two controllers under one name would
//! mix them.

use std::collections::HashSet;
use std::sync::OnceLock;

use parking_lot::Mutex;

use crate::error::ControllerError;

fn running() -> &'static Mutex<HashSet<String>> {
    static RUNNING: OnceLock<Mutex<HashSet<String>>> = OnceLock::new();
    RUNNING.get_or_init(Default::default)
}

/// A name held while its controller runs; released when dropped.
#[derive(Debug)]
pub(crate) struct NameClaim(String);

impl NameClaim {
    /// Claims `name`, or says it is taken.
    pub fn claim(name: &str) -> Result<Self, ControllerError> {
        if running().lock().insert(name.to_string()) {
            Ok(NameClaim(name.to_string()))
        } else {
            Err(ControllerError::DuplicateName(name.to_string()))
        }
    }
}

impl Drop for NameClaim {
    fn drop(&mut self) {
        running().lock().remove(&self.0);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_held_until_released() {
        let a = NameClaim::claim("names-test").unwrap();
        assert!(matches!(
            NameClaim::claim("names-test"),
            Err(ControllerError::DuplicateName(n)) if n == "names-test"
        ));
        drop(a);
        assert!(NameClaim::claim("names-test").is_ok());
    }
}
