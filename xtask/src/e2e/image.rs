//! The sample-controller's container image, built without a registry: the release binary and,
//! on `FROM scratch`, the shared libraries it links and the dynamic loader (read from `ldd`);
//! or the binary alone on a `--base-image` that has its libraries. Loaded into the kind node
//! with `kind load docker-image`.
//!
//! In a pod the binary needs nothing else: it reads its service account's token and CA from
//! the mounted volume, reaches the API server by the IP in `KUBERNETES_SERVICE_HOST` (no DNS,
//! so no NSS files), and needs no system CA bundle.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The tag `deploy/deployment.yaml` runs.
pub(crate) const IMAGE: &str = "kcache-sample-controller:dev";

/// Where the image keeps the binary.
const BINARY_IN_IMAGE: &str = "/sample-controller";

/// `cargo build --profile bench-release` of the example (fat LTO: a smaller binary, fewer
/// pages resident); returns the binary's path.
pub(crate) fn build_binary() -> Result<PathBuf, String> {
    crate::cargo(
        &[
            "build",
            "--profile",
            "bench-release",
            "-p",
            "kcache",
            "--example",
            "sample-controller",
        ],
        &[],
    )?;
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::workspace_root().join("target"));
    let binary = target.join("bench-release/examples/sample-controller");
    match binary.is_file() {
        true => Ok(binary),
        false => Err(format!("cargo built no {}", binary.display())),
    }
}

/// Builds [`IMAGE`] from a temporary context holding `binary` (and, without `base_image`,
/// what it links); returns a one-line description of the image's contents.
pub(crate) fn build_image(
    binary: &Path,
    base_image: Option<&str>,
    context: &Path,
) -> Result<String, String> {
    let rootfs = context.join("rootfs");
    let mut files = vec![binary.to_path_buf()];
    if base_image.is_none() {
        files.extend(linked_libraries(binary)?);
    }
    for file in &files {
        let inside = match file == binary {
            true => PathBuf::from(BINARY_IN_IMAGE),
            false => file.clone(),
        };
        let dest = rootfs.join(inside.strip_prefix("/").unwrap_or(&inside));
        if let Some(parent) = dest.parent() {
            std::fs::create_dir_all(parent)
                .map_err(|e| format!("cannot create {}: {e}", parent.display()))?;
        }
        // `copy` follows symlinks: the image gets the library under the name the loader asks for.
        std::fs::copy(file, &dest).map_err(|e| format!("cannot copy {}: {e}", file.display()))?;
    }
    let dockerfile = dockerfile(base_image);
    std::fs::write(context.join("Dockerfile"), &dockerfile)
        .map_err(|e| format!("cannot write the Dockerfile: {e}"))?;
    let status = Command::new("docker")
        .args(["build", "--quiet", "-t", IMAGE])
        .arg(context)
        .status()
        .map_err(|e| format!("cannot run docker build: {e}"))?;
    if !status.success() {
        return Err(format!("`docker build -t {IMAGE}` failed ({status})"));
    }
    let base = base_image.unwrap_or("scratch");
    let libs = files.len() - 1;
    Ok(format!(
        "{IMAGE}: FROM {base}, the binary + {libs} linked files"
    ))
}

/// `kind load docker-image IMAGE --name CLUSTER`.
pub(crate) fn load_into_kind(kind: &str, cluster: &str) -> Result<(), String> {
    let status = Command::new(kind)
        .args(["load", "docker-image", IMAGE, "--name", cluster])
        .status()
        .map_err(|e| format!("cannot run {kind} load docker-image: {e}"))?;
    match status.success() {
        true => Ok(()),
        false => Err(format!(
            "`{kind} load docker-image {IMAGE}` failed ({status})"
        )),
    }
}

fn dockerfile(base_image: Option<&str>) -> String {
    let base = base_image.unwrap_or("scratch");
    // A numeric user: scratch has no /etc/passwd, and the controller needs no root.
    format!("FROM {base}\nCOPY rootfs/ /\nUSER 65532:65532\nENTRYPOINT [\"{BINARY_IN_IMAGE}\"]\n")
}

/// The files `ldd binary` names: each shared library and the dynamic loader (none for a
/// static binary).
fn linked_libraries(binary: &Path) -> Result<Vec<PathBuf>, String> {
    let out = Command::new("ldd").arg(binary).output().map_err(|e| {
        format!("cannot run ldd (needed to find what the binary links; or pass --base-image): {e}")
    })?;
    let text = String::from_utf8_lossy(&out.stdout);
    if !out.status.success() {
        let static_binary = text.contains("not a dynamic executable")
            || String::from_utf8_lossy(&out.stderr).contains("not a dynamic executable");
        return match static_binary {
            true => Ok(Vec::new()),
            false => Err(format!(
                "`ldd {}` failed ({})",
                binary.display(),
                out.status
            )),
        };
    }
    parse_ldd(&text).map_err(|missing| {
        format!(
            "{} links {missing}, which ldd cannot find on this machine",
            binary.display()
        )
    })
}

/// Reads `ldd` lines: `libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x…)` gives the path after
/// `=>`; `/lib64/ld-linux-x86-64.so.2 (0x…)` (the loader) its own path; the kernel's
/// `linux-vdso.so.1 (0x…)` has no file and is left out. A library `ldd` cannot find is the
/// error.
fn parse_ldd(text: &str) -> Result<Vec<PathBuf>, String> {
    let mut files = Vec::new();
    for line in text.lines().map(str::trim) {
        let path = match line.split_once("=>") {
            Some((lib, right)) if right.trim() == "not found" => return Err(lib.trim().into()),
            Some((_, right)) => right.split_whitespace().next(),
            None => line.split_whitespace().next(),
        };
        files.extend(path.filter(|p| p.starts_with('/')).map(PathBuf::from));
    }
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ldd_output_gives_libraries_and_loader_without_the_vdso() {
        let text = "\tlinux-vdso.so.1 (0x00007ffd6b5f2000)\n\
                    \tlibgcc_s.so.1 => /lib/x86_64-linux-gnu/libgcc_s.so.1 (0x00007f1a)\n\
                    \tlibc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x00007f19)\n\
                    \t/lib64/ld-linux-x86-64.so.2 (0x00007f1b)\n";
        assert_eq!(
            parse_ldd(text).unwrap(),
            [
                "/lib/x86_64-linux-gnu/libgcc_s.so.1",
                "/lib/x86_64-linux-gnu/libc.so.6",
                "/lib64/ld-linux-x86-64.so.2"
            ]
            .map(PathBuf::from)
        );
    }

    #[test]
    fn a_library_ldd_cannot_find_is_named() {
        let text = "\tlibc.so.6 => /lib/libc.so.6 (0x1)\n\tlibfoo.so.1 => not found\n";
        assert_eq!(parse_ldd(text), Err("libfoo.so.1".to_string()));
    }

    #[test]
    fn dockerfile_starts_from_scratch_unless_given_a_base() {
        assert!(dockerfile(None).starts_with("FROM scratch\n"));
        let based = dockerfile(Some("debian:12-slim"));
        assert!(based.starts_with("FROM debian:12-slim\n"), "{based}");
        assert!(
            based.contains("ENTRYPOINT [\"/sample-controller\"]"),
            "{based}"
        );
    }
}
