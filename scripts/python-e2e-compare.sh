#!/usr/bin/env bash
# Runs the official Python client's own end-to-end tests (kubernetes-client/python's
# `kubernetes/e2e_test` and `kubernetes/dynamic/test_client.py`) against each kubeconfig given,
# one test at a time with a time limit (several tests wait for a running pod, which needs a
# kubelet neither envtest nor kcache-testserver has), and prints each test's outcome per server
# and the per-server counts.
#
#   scripts/python-e2e-compare.sh PKG_DIR NAME=KUBECONFIG [NAME=KUBECONFIG ...]
#
# PKG_DIR holds a `kubernetes` package (e.g. a copy of Debian's python3-kubernetes 22.6.0) with
# `e2e_test/` and `dynamic/test_client.py` copied in from the kubernetes-client/python checkout of
# the same tag (the released packages leave the tests out). See docs/testing.md.
# PER_TEST_TIMEOUT (seconds, default 60) bounds each test; PYTHON (default /usr/bin/python3) runs it.
set -u
pkg=$1; shift
limit=${PER_TEST_TIMEOUT:-60}
python=${PYTHON:-/usr/bin/python3}
ids=$(cd "$pkg" && PYTHONPATH="$pkg" "$python" -m pytest -p no:cacheprovider --collect-only -q \
    kubernetes/e2e_test kubernetes/dynamic/test_client.py 2>/dev/null | grep '::')
for server in "$@"; do
    name=${server%%=*}; kubeconfig=${server#*=}
    pass=0; fail=0; skip=0; timedout=0
    for id in $ids; do
        out=$(cd "$pkg" && KUBECONFIG=$kubeconfig PYTHONPATH="$pkg" timeout "$limit" \
            "$python" -m pytest -p no:cacheprovider -q -rA "$id" 2>&1)
        rc=$?
        if [ $rc -eq 124 ]; then r=TIMEOUT; timedout=$((timedout+1))
        elif echo "$out" | grep -q '^PASSED'; then r=PASS; pass=$((pass+1))
        elif echo "$out" | grep -q '^SKIPPED'; then r=SKIP; skip=$((skip+1))
        else r=FAIL; fail=$((fail+1)); fi
        echo "$name $r $id"
    done
    echo "$name: $((pass+fail+skip+timedout)) run, $pass passed, $fail failed, $skip skipped, $timedout timed out"
done
