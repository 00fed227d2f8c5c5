//! kubeconfig parsing and resolution on arbitrary text: errors, never panics.
#![no_main]

use std::path::Path;

use kcache_transport::{Config, KubeConfigOptions, Kubeconfig};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    if let Ok(kc) = Kubeconfig::parse(text, Path::new("/nonexistent/fuzz/kubeconfig")) {
        let _ = Config::from_kubeconfig(&kc, &KubeConfigOptions::default());
        let merged = kc.clone().merge(kc);
        let _ = Config::from_kubeconfig(&merged, &KubeConfigOptions::default());
    }
});
