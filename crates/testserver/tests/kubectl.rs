//! kubectl (the machine's, v1.32 here) against the cluster: get, get -w, create -f, apply,
//! label, patch, delete, explain. Skipped with a printed reason when kubectl is not installed,
//! except under `CI=true`, where CI provides kubectl and its absence fails the test.

use crate::common;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use common::*;

use crate::openapi_crd::{crd, CRDS};

/// The first `kubectl` on `PATH`.
fn kubectl_path() -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join("kubectl"))
        .find(|p| p.is_file())
}

/// kubectl against one cluster, in namespace `ns`, with a home of its own (its cache).
struct Kubectl {
    bin: PathBuf,
    kubeconfig: PathBuf,
    home: tempfile::TempDir,
    ns: String,
}

impl Kubectl {
    /// kubectl for `c`, or `None` after printing why `case` is skipped (a failure under CI).
    fn for_cluster(c: &kcache_testing::TestCluster, ns: &str, case: &str) -> Option<Kubectl> {
        let Some(bin) = kubectl_path() else {
            skip_unless_ci(case, "no kubectl on PATH");
            return None;
        };
        Some(Kubectl {
            bin,
            kubeconfig: c.kubeconfig_path().to_path_buf(),
            home: tempfile::tempdir().unwrap(),
            ns: ns.to_string(),
        })
    }
}

impl Kubectl {
    fn cmd(&self, args: &[&str]) -> Command {
        let mut c = Command::new(&self.bin);
        c.args(args)
            .args(["-n", &self.ns])
            .env("KUBECONFIG", &self.kubeconfig)
            .env("HOME", self.home.path());
        c
    }

    fn run(&self, args: &[&str]) -> String {
        let out = self.cmd(args).output().expect("kubectl runs");
        let text = String::from_utf8_lossy(&out.stdout).into_owned();
        assert!(
            out.status.success(),
            "kubectl {args:?} failed: {}{text}",
            String::from_utf8_lossy(&out.stderr)
        );
        text
    }
}

// kubectl runs as a blocking child process: a second worker keeps the embedded server serving.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_works_against_the_cluster() {
    let c = cluster().await;
    let ns = c.create_namespace("kubectl").await.unwrap();
    let Some(k) = Kubectl::for_cluster(&c, &ns, "kubectl_works_against_the_cluster") else {
        return;
    };

    // A bounded `get -w`: read its lines on a thread, stop it once the last change shows up.
    let mut watch = k
        .cmd(&["get", "configmaps", "-w", "-o", "name"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let out = watch.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });

    let file = k.home.path().join("cm.yaml");
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-file\ndata:\n  a: \"1\"\n",
    )
    .unwrap();
    assert!(k
        .run(&["create", "-f", file.to_str().unwrap()])
        .contains("configmap/from-file created"));
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"1\"\n",
    )
    .unwrap();
    assert!(k
        .run(&["apply", "-f", file.to_str().unwrap()])
        .contains("configmap/applied created"));
    std::fs::write(
        &file,
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\ndata:\n  a: \"2\"\n",
    )
    .unwrap();
    assert!(k
        .run(&["apply", "-f", file.to_str().unwrap()])
        .contains("configmap/applied configured"));
    assert_eq!(
        k.run(&["get", "configmap", "applied", "-o", "jsonpath={.data.a}"]),
        "2"
    );
    k.run(&["label", "configmap", "applied", "team=kcache"]);
    k.run(&[
        "patch",
        "configmap",
        "applied",
        "-p",
        r#"{"data":{"b":"3"}}"#,
    ]);
    k.run(&[
        "patch",
        "configmap",
        "applied",
        "--type",
        "merge",
        "-p",
        r#"{"data":{"c":"4"}}"#,
    ]);
    let got = k.run(&[
        "get",
        "configmaps",
        "-l",
        "team=kcache",
        "-o",
        "jsonpath={.items[*].data}",
    ]);
    assert!(
        got.contains(r#""b":"3""#) && got.contains(r#""c":"4""#),
        "{got}"
    );
    let listed = k.run(&["get", "configmaps"]);
    assert!(
        listed.contains("from-file") && listed.contains("applied"),
        "{listed}"
    );
    assert!(k
        .run(&["delete", "configmap", "from-file"])
        .contains("deleted"));
    assert!(!k
        .run(&["get", "configmaps", "-o", "name"])
        .contains("from-file"));

    let mut seen = Vec::new();
    while !seen.iter().any(|l: &String| l.contains("applied"))
        || !seen.iter().any(|l| l.contains("from-file"))
    {
        seen.push(
            rx.recv_timeout(std::time::Duration::from_secs(15))
                .expect("kubectl get -w printed the changes"),
        );
    }
    let _ = watch.kill();
    let _ = watch.wait();
}

// `kubectl explain` reads the built-in kinds' schemas (from `/openapi/v3` here, from
// `/openapi/v2` on 1.20.2): the same fields either way.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_describes_built_in_kinds() {
    let c = cluster().await;
    let Some(k) = Kubectl::for_cluster(&c, "default", "kubectl_explain_describes_built_in_kinds")
    else {
        return;
    };
    let spec = k.run(&["explain", "service.spec"]);
    for field in ["clusterIP", "sessionAffinity", "ports", "selector"] {
        assert!(spec.contains(field), "{field} in {spec}");
    }
    let strategy = k.run(&["explain", "deployments.spec.strategy", "--recursive"]);
    assert!(strategy.contains("maxSurge"), "{strategy}");
}

// `kubectl explain` of a custom resource: its schema's fields (from `/openapi/v3` here, from
// `/openapi/v2` on 1.20.2, which publishes the CRD a moment after it is created).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_explain_describes_custom_resources() {
    let c = cluster().await;
    let group = "explain.kcache.dev";
    let r = c.client().post(CRDS, &crd(group)).await.unwrap();
    assert_eq!(r.status, 201, "{}", r.body);
    let Some(k) = Kubectl::for_cluster(&c, "default", "kubectl_explain_describes_custom_resources")
    else {
        return;
    };
    let version = format!("--api-version={group}/v1");
    let mut spec = String::new();
    for _ in 0..100 {
        let out = k
            .cmd(&["explain", &version, "sprockets.spec"])
            .output()
            .unwrap();
        spec = String::from_utf8_lossy(&out.stdout).into_owned();
        if out.status.success() && spec.contains("replicas") {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    for field in ["replicas", "note", "port", "raw"] {
        assert!(spec.contains(field), "{field} in {spec}");
    }
    let top = k.run(&["explain", &version, "sprockets"]);
    assert!(top.contains("A sprocket."), "{top}");
    assert!(top.contains("metadata"), "{top}");
    let del = c
        .client()
        .delete(&format!("{CRDS}/sprockets.{group}"))
        .await
        .unwrap();
    assert_eq!(del.status, 200, "{}", del.body);
}

// kubectl validates a manifest itself against `/openapi/v2` (in protobuf), as it does with
// kube-apiserver 1.20.2, which takes no `fieldValidation`: an unknown field is refused before
// anything is sent, with the same words on both servers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_validates_manifests_against_openapi_v2() {
    let c = cluster().await;
    let ns = c.create_namespace("kubectl-validate").await.unwrap();
    let Some(k) = Kubectl::for_cluster(&c, &ns, "kubectl_validates_manifests_against_openapi_v2")
    else {
        return;
    };
    let file = k.home.path().join("cm.json");
    std::fs::write(
        &file,
        r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "junk"}, "data": {"a": "b"}, "junk": 1}"#,
    )
    .unwrap();
    let out = k
        .cmd(&["create", "-f", file.to_str().unwrap()])
        .output()
        .unwrap();
    assert!(!out.status.success(), "an unknown field is refused");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            r#"ValidationError(ConfigMap): unknown field "junk" in io.k8s.api.core.v1.ConfigMap"#
        ),
        "{stderr}"
    );
    let got = c
        .client()
        .get(&format!("/api/v1/namespaces/{ns}/configmaps/junk"))
        .await
        .unwrap();
    assert_eq!(got.status, 404, "nothing was sent");
    let created = k.run(&["create", "-f", file.to_str().unwrap(), "--validate=false"]);
    assert!(created.contains("configmap/junk created"), "{created}");
}

// kubectl's typed commands send protobuf bodies (`create namespace`, `create configmap`,
// `create deployment`, `auth can-i --list`): the server reads them as the JSON the same
// client would have sent.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kubectl_typed_commands_send_protobuf_the_server_reads() {
    let c = cluster().await;
    let ns = format!("kubectl-proto-{}", std::process::id());
    let case = "kubectl_typed_commands_send_protobuf_the_server_reads";
    let Some(k) = Kubectl::for_cluster(&c, &ns, case) else {
        return;
    };
    assert!(k.run(&["create", "namespace", &ns]).contains("created"));
    let cm = k.run(&[
        "create",
        "configmap",
        "cfg",
        "--from-literal=a=b",
        "-o",
        "json",
    ]);
    let cm: serde_json::Value = serde_json::from_str(&cm).unwrap();
    assert_eq!(cm["data"], serde_json::json!({"a": "b"}));
    assert_eq!(cm["metadata"]["namespace"], ns.as_str());
    let d = k.run(&[
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
        "-o",
        "json",
    ]);
    let d: serde_json::Value = serde_json::from_str(&d).unwrap();
    assert_eq!(d["spec"]["replicas"], 2);
    assert_eq!(d["spec"]["selector"]["matchLabels"]["app"], "web");
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "nginx"
    );
    let svc = k.run(&[
        "create",
        "service",
        "clusterip",
        "svc",
        "--tcp=80:8080",
        "-o",
        "json",
    ]);
    let svc: serde_json::Value = serde_json::from_str(&svc).unwrap();
    assert_eq!(
        svc["spec"]["ports"][0]["targetPort"], 8080,
        "an IntOrString read as a number"
    );
    let rules = k.run(&["auth", "can-i", "--list"]);
    assert!(rules.contains("Resources"), "{rules}");
    let deleted = c
        .client()
        .delete(&format!("/api/v1/namespaces/{ns}"))
        .await
        .unwrap();
    assert_eq!(deleted.status, 200, "{}", deleted.body);
}
