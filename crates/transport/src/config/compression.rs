//! Whether a client asks for gzip-compressed responses: as client-go does, unless the config
//! says otherwise or the server is on the loopback, where compressing only costs CPU.
//!
//! client-go asks for gzip on every request (Go's transport adds `Accept-Encoding: gzip`) unless
//! `rest.Config.DisableCompression` is set, and kube-apiserver then compresses every response
//! over 128 KiB: lists, mostly. Over a real network that trades the server's CPU for bytes; over
//! the loopback there are no bytes to save, and a 10k-ConfigMap list costs kube-apiserver 1.20
//! about 25 ms more to send gzipped, and the client inflates it on top. Kubernetes' own
//! loopback clients (kube-apiserver's loopback client, and kube-controller-manager and
//! kube-scheduler, kubernetes#80919) turn compression off for that reason; kcache does it by
//! default for a server whose address is a loopback one, reached without a proxy.

use std::net::IpAddr;

use super::Config;

impl Config {
    /// Whether requests say `Accept-Encoding: gzip`: [`disable_compression`] when set, otherwise
    /// yes unless the server is on the loopback (`localhost`, `127.0.0.0/8`, `::1`) and no
    /// proxy is in between.
    ///
    /// [`disable_compression`]: Config::disable_compression
    pub fn asks_for_gzip(&self) -> bool {
        match self.disable_compression {
            Some(disable) => !disable,
            None => self.proxy_url.is_some() || !is_loopback(&self.cluster_url),
        }
    }
}

/// Whether the URL's host names the loopback by itself, without resolving anything.
fn is_loopback(url: &http::Uri) -> bool {
    let Some(host) = url.host() else {
        return false;
    };
    let host = host.trim_start_matches('[').trim_end_matches(']');
    host.eq_ignore_ascii_case("localhost")
        || host.parse::<IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn config(url: &str) -> Config {
        Config::new(url.parse().unwrap())
    }

    #[test]
    fn gzip_is_asked_of_a_remote_server_and_not_of_the_loopback() {
        for remote in [
            "https://10.96.0.1",
            "https://kubernetes.default.svc:443",
            "https://api.example.com:6443/prefix",
            "https://[2001:db8::1]:6443",
            "https://localhost.example.com",
        ] {
            assert!(config(remote).asks_for_gzip(), "{remote}");
        }
        for local in [
            "https://127.0.0.1:6443",
            "https://127.1.2.3",
            "https://localhost:8443",
            "https://LOCALHOST",
            "https://[::1]:6443",
        ] {
            assert!(!config(local).asks_for_gzip(), "{local}");
        }
    }

    #[test]
    fn disable_compression_decides_when_set_and_a_proxy_counts_as_remote() {
        let mut c = config("https://127.0.0.1:6443");
        c.disable_compression = Some(false);
        assert!(c.asks_for_gzip());
        c.disable_compression = None;
        c.proxy_url = Some("http://127.0.0.1:3128".parse().unwrap());
        assert!(c.asks_for_gzip());
        let mut c = config("https://10.0.0.1");
        c.disable_compression = Some(true);
        assert!(!c.asks_for_gzip());
    }
}
