//! Certificates and credentials for the envtest control plane, made with the openssl CLI.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The files kube-apiserver needs, in the run's directory.
pub struct Credentials {
    pub ca_cert: PathBuf,
    pub server_cert: PathBuf,
    pub server_key: PathBuf,
    pub sa_key: PathBuf,
    pub sa_pub: PathBuf,
    pub token_file: PathBuf,
    pub token: String,
}

fn openssl(dir: &Path, args: &[&str]) -> Result<(), String> {
    let out = Command::new("openssl")
        .args(args)
        .current_dir(dir)
        .output()
        .map_err(|e| format!("cannot run openssl (is it installed?): {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "openssl {} failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr)
        ))
    }
}

/// A CA, a serving certificate for 127.0.0.1/localhost signed by it, a service-account key pair
/// and a static token file whose user is in `system:masters`.
pub fn generate(dir: &Path) -> Result<Credentials, String> {
    openssl(
        dir,
        &[
            "req",
            "-x509",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "ca.key",
            "-out",
            "ca.crt",
            "-days",
            "2",
            "-subj",
            "/CN=kcache-envtest-ca",
        ],
    )?;
    openssl(
        dir,
        &[
            "req",
            "-newkey",
            "rsa:2048",
            "-nodes",
            "-keyout",
            "server.key",
            "-out",
            "server.csr",
            "-subj",
            "/CN=kube-apiserver",
        ],
    )?;
    std::fs::write(
        dir.join("server.ext"),
        "subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\nkeyUsage=digitalSignature,keyEncipherment\n",
    )
    .map_err(|e| format!("cannot write server.ext: {e}"))?;
    openssl(
        dir,
        &[
            "x509",
            "-req",
            "-in",
            "server.csr",
            "-CA",
            "ca.crt",
            "-CAkey",
            "ca.key",
            "-CAcreateserial",
            "-out",
            "server.crt",
            "-days",
            "2",
            "-extfile",
            "server.ext",
        ],
    )?;
    openssl(dir, &["genrsa", "-out", "sa.key", "2048"])?;
    openssl(dir, &["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"])?;
    let token = format!("kcache-envtest-{}", std::process::id());
    let token_file = dir.join("tokens.csv");
    std::fs::write(
        &token_file,
        format!("{token},kcache-admin,kcache-admin,\"system:masters\"\n"),
    )
    .map_err(|e| format!("cannot write the token file: {e}"))?;
    Ok(Credentials {
        ca_cert: dir.join("ca.crt"),
        server_cert: dir.join("server.crt"),
        server_key: dir.join("server.key"),
        sa_key: dir.join("sa.key"),
        sa_pub: dir.join("sa.pub"),
        token_file,
        token,
    })
}

/// Standard base64, for `certificate-authority-data` (xtask keeps no dependencies).
pub fn base64(data: &[u8]) -> String {
    const A: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(data.len().div_ceil(3) * 4);
    for chunk in data.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(A[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #[test]
    fn base64_matches_rfc4648_vectors() {
        for (i, o) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(super::base64(i.as_bytes()), o);
        }
    }
}
