#!/usr/bin/env bash
# Runs kube-rs's own cluster tests (the `#[ignore = "needs cluster ..."]` tests inside the
# published kube, kube-client and kube-runtime crates) against each kubeconfig given, one test at
# a time with a time limit (several wait for a running pod, which needs a kubelet neither envtest
# nor kcache-testserver has), and prints each test's outcome per server, the per-server counts and
# the tests whose outcome differs between servers.
#
#   scripts/kubers-e2e-compare.sh NAME=KUBECONFIG [NAME=KUBECONFIG ...]
#
# The suite is set up in SUITE_DIR (default /var/tmp/kubers-suite, outside the repository): the
# crates' sources are copied from the cargo registry (KUBE_VERSION, default 5.0.0; `cargo fetch`
# or any build that used them puts them there), joined in one workspace, given back the `kube`
# dev-dependency crates.io strips, and built with the features their tests need; the build
# needs crates.io. See docs/testing.md.
# PER_TEST_TIMEOUT (seconds, default 60) bounds each test.
set -u
version=${KUBE_VERSION:-5.0.0}
suite=${SUITE_DIR:-/var/tmp/kubers-suite}
limit=${PER_TEST_TIMEOUT:-60}
export CARGO_TARGET_DIR=$suite/target
registry=$(ls -d "${CARGO_HOME:-$HOME/.cargo}"/registry/src/*/kube-client-"$version" 2>/dev/null | head -1)
if [ -z "$registry" ]; then
    echo "kube-client $version is not in the cargo registry: run 'cargo fetch' in a crate using it" >&2
    exit 2
fi
registry=$(dirname "$registry")
mkdir -p "$suite"
for crate in kube kube-client kube-runtime kube-core; do
    if [ ! -d "$suite/$crate" ]; then
        cp -r "$registry/$crate-$version" "$suite/$crate" || exit 2
        rm -f "$suite/$crate/Cargo.lock"
    fi
done
# The published manifests drop path dev-dependencies; the tests use `kube` itself.
add_kube_dev_dep() {
    grep -q '^\[dev-dependencies.kube\]' "$suite/$1/Cargo.toml" ||
        printf '\n[dev-dependencies.kube]\npath = "../kube"\nfeatures = %s\n' "$2" >>"$suite/$1/Cargo.toml"
}
add_kube_dev_dep kube-client '["derive", "client", "ws"]'
add_kube_dev_dep kube-runtime '["derive", "client", "runtime"]'
cat >"$suite/Cargo.toml" <<'TOML'
[workspace]
resolver = "2"
members = ["kube", "kube-client", "kube-runtime", "kube-core"]

[patch.crates-io]
kube-client = { path = "kube-client" }
kube-core = { path = "kube-core" }
kube-runtime = { path = "kube-runtime" }
TOML
# Each crate with the features that compile all of its cluster tests in.
builds="kube:client,rustls-tls,ring,openssl-tls,derive,runtime,ws,admission,jsonpatch
kube-client:client,rustls-tls,ring,openssl-tls,ws,jsonpatch,admission,kubelet-debug,unstable-client
kube-runtime:"
binaries=""
for build in $builds; do
    crate=${build%%:*}; features=${build#*:}
    bin=$(cd "$suite" && cargo test --no-run --message-format=json -p "$crate" ${features:+--features "$features"} 2>"$suite/build.log" |
        grep '"profile":{[^}]*"test":true' | grep -o '"executable":"[^"]*"' | cut -d'"' -f4 | head -1)
    if [ -z "$bin" ]; then
        echo "building $crate's tests failed ($suite/build.log):" >&2
        tail -20 "$suite/build.log" >&2
        exit 2
    fi
    binaries="$binaries $crate=$bin"
done
# The ignored tests that talk to a cluster: every one but the exec-credential tests in
# kube-client's client::auth, which run a local command and need no server.
tests=""
for entry in $binaries; do
    crate=${entry%%=*}; bin=${entry#*=}
    for t in $("$bin" --list --ignored --format terse 2>/dev/null | sed -n 's/: test$//p' | grep -v '^client::auth::'); do
        tests="$tests $crate::$t"
    done
done
results=$(mktemp)
for server in "$@"; do
    name=${server%%=*}; kubeconfig=${server#*=}
    pass=0; fail=0; timedout=0
    for id in $tests; do
        crate=${id%%::*}; t=${id#*::}
        bin=$(for entry in $binaries; do [ "${entry%%=*}" = "$crate" ] && echo "${entry#*=}"; done)
        out=$(KUBECONFIG=$kubeconfig RUST_BACKTRACE=0 timeout "$limit" "$bin" --ignored --exact "$t" 2>&1)
        rc=$?
        if [ $rc -eq 124 ]; then r=TIMEOUT; timedout=$((timedout+1))
        elif [ $rc -eq 0 ]; then r=PASS; pass=$((pass+1))
        else r=FAIL; fail=$((fail+1)); fi
        echo "$name $r $id"
        # Why it failed: the test's error, or its panic message.
        [ $r = FAIL ] && echo "$out" | grep -m1 -A1 -E '^Error: |panicked at' |
            sed -e '/panicked at/d' -e 's/^/    /' | cut -c1-240
        echo "$id $name $r" >>"$results"
    done
    echo "$name: $((pass+fail+timedout)) run, $pass passed, $fail failed, $timedout timed out"
done
echo "differing outcomes:"
sort "$results" | awk '{ out[$1] = out[$1] " " $2 "=" $3; seen[$1] = seen[$1] ? seen[$1] : $3; if ($3 != seen[$1]) diff[$1] = 1 }
    END { n = 0; for (t in diff) { print "  " t out[t]; n++ } if (n == 0) print "  none" }'
rm -f "$results"
