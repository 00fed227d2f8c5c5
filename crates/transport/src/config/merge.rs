//! Merging kubeconfig files with kubectl's rules, and finding them (`KUBECONFIG`,
//! `~/.kube/config`) — client-go's `ClientConfigLoadingRules`.

use std::path::{Path, PathBuf};

use crate::config::kubeconfig::Kubeconfig;
use crate::error::ConfigError;

/// The environment variable listing kubeconfig files.
pub const KUBECONFIG_ENV: &str = "KUBECONFIG";

impl Kubeconfig {
    /// Merges `other` (lower precedence) into `self`: for every named cluster, user and context,
    /// and for current-context, the first file to set it wins.
    pub fn merge(mut self, other: Kubeconfig) -> Kubeconfig {
        for c in other.clusters {
            if self.cluster(&c.name).is_none() {
                self.clusters.push(c);
            }
        }
        for u in other.users {
            if self.user(&u.name).is_none() {
                self.users.push(u);
            }
        }
        for c in other.contexts {
            if self.context(&c.name).is_none() {
                self.contexts.push(c);
            }
        }
        if self.current_context.as_deref().unwrap_or("").is_empty() {
            self.current_context = other.current_context;
        }
        self.files.extend(other.files);
        self
    }

    /// Reads and merges a precedence list of files, as for `KUBECONFIG=a:b:c`: empty entries and
    /// repeats are skipped, and so are files that do not exist (as kubectl does); a file that
    /// exists but cannot be read or parsed is an error naming it.
    pub fn read_merged(paths: &[PathBuf]) -> Result<Kubeconfig, ConfigError> {
        let mut seen: Vec<&Path> = Vec::new();
        let mut merged = Kubeconfig::default();
        for p in paths {
            if p.as_os_str().is_empty() || seen.contains(&p.as_path()) {
                continue;
            }
            seen.push(p);
            if !p.exists() {
                continue;
            }
            merged = merged.merge(Kubeconfig::read_from(p)?);
        }
        Ok(merged)
    }

    /// The kubeconfig kubectl would use: the files in `KUBECONFIG` (colon-separated, merged), or
    /// else `~/.kube/config`. `None` when neither names an existing file.
    pub fn from_env() -> Result<Option<Kubeconfig>, ConfigError> {
        let paths = default_paths(
            std::env::var_os(KUBECONFIG_ENV).as_deref(),
            home_dir().as_deref(),
        );
        if !paths.iter().any(|p| p.exists()) {
            return Ok(None);
        }
        Kubeconfig::read_merged(&paths).map(Some)
    }
}

/// The files kubectl reads: the `KUBECONFIG` list when set and non-empty, else `~/.kube/config`.
pub fn default_paths(
    kubeconfig_env: Option<&std::ffi::OsStr>,
    home: Option<&Path>,
) -> Vec<PathBuf> {
    match kubeconfig_env.filter(|v| !v.is_empty()) {
        Some(list) => std::env::split_paths(list).collect(),
        None => home
            .map(|h| vec![h.join(".kube").join("config")])
            .unwrap_or_default(),
    }
}

fn home_dir() -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(dir: &Path, name: &str, text: &str) -> PathBuf {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    }

    #[test]
    fn first_file_to_set_a_key_wins() {
        let dir = tempfile::tempdir().unwrap();
        let a = write(
            dir.path(),
            "a",
            "clusters:\n- {name: shared, cluster: {server: 'https://a'}}\ncontexts:\n- {name: ca, context: {cluster: shared}}\n",
        );
        let b = write(
            dir.path(),
            "b",
            "current-context: cb\nclusters:\n- {name: shared, cluster: {server: 'https://b'}}\n- {name: onlyb, cluster: {server: 'https://b2'}}\ncontexts:\n- {name: cb, context: {cluster: onlyb}}\n",
        );
        let c = write(dir.path(), "c", "current-context: cc\n");
        let missing = dir.path().join("missing");
        let kc =
            Kubeconfig::read_merged(&[a.clone(), PathBuf::new(), missing, b.clone(), a.clone(), c])
                .unwrap();
        assert_eq!(
            kc.cluster("shared").unwrap().cluster.server.as_deref(),
            Some("https://a")
        );
        assert_eq!(kc.cluster("shared").unwrap().location_of_origin, a);
        assert_eq!(kc.cluster("onlyb").unwrap().location_of_origin, b);
        assert_eq!(kc.current_context.as_deref(), Some("cb"));
        assert_eq!(kc.contexts.len(), 2);
        assert_eq!(kc.files.len(), 3);
    }

    #[test]
    fn a_broken_file_in_the_list_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let good = write(dir.path(), "good", "current-context: x\n");
        let bad = write(dir.path(), "bad", "users: {\n");
        let e = Kubeconfig::read_merged(&[good, bad.clone()]).unwrap_err();
        assert!(e.to_string().contains(&bad.display().to_string()), "{e}");
    }

    #[test]
    fn finds_files_like_kubectl() {
        let list = std::ffi::OsString::from("/a:/b::/c");
        assert_eq!(
            default_paths(Some(&list), Some(Path::new("/home/u"))),
            [
                PathBuf::from("/a"),
                PathBuf::from("/b"),
                PathBuf::new(),
                PathBuf::from("/c")
            ]
        );
        assert_eq!(
            default_paths(Some(std::ffi::OsStr::new("")), Some(Path::new("/home/u"))),
            [PathBuf::from("/home/u/.kube/config")]
        );
        assert!(default_paths(None, None).is_empty());
    }
}
