#!/usr/bin/env bash
# kubectl 1.20's own OpenAPI code against each server: builds scripts/openapicheck/main.go in
# Debian's kubernetes 1.20.2 source tree (the one ../shared/tools/envtest-assets.sh unpacks, as
# cgbench's build does), registers the same CRD on each server, runs the check (read /openapi/v2
# in protobuf, build kubectl's models, look up three kinds, validate four objects client-side)
# and prints whether every server answered the same.
#
#   scripts/kubectl-openapi-compare.sh NAME=KUBECONFIG [NAME=KUBECONFIG ...]
#
# WORK (default /var/tmp/kcache-envtest-build) is that tree's parent. See docs/testing.md.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/var/tmp/kcache-envtest-build}
tree=$work/gopath/src/k8s.io/kubernetes
[ -d "$tree/vendor/k8s.io/kubectl" ] || { echo "no kubernetes 1.20.2 tree under $work" >&2; exit 2; }
mkdir -p "$tree/cmd/openapicheck"
cp "$here/openapicheck/main.go" "$tree/cmd/openapicheck/"
bin=$(mktemp /tmp/openapicheck.XXXXXX)
(cd "$tree" && GOPATH="$work/gopath" GOCACHE="$work/gocache" GO111MODULE=off CGO_ENABLED=0 GOFLAGS= \
    go build -o "$bin" ./cmd/openapicheck)
crd=$(mktemp /tmp/widgets.XXXXXX.json)
cat >"$crd" <<'JSON'
{"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
 "metadata": {"name": "widgets.example.kcache.dev"},
 "spec": {"group": "example.kcache.dev", "scope": "Namespaced",
  "names": {"kind": "Widget", "plural": "widgets", "singular": "widget", "listKind": "WidgetList"},
  "versions": [{"name": "v1", "served": true, "storage": true,
   "subresources": {"status": {}, "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"}},
   "schema": {"openAPIV3Schema": {"type": "object", "properties": {
     "spec": {"type": "object", "required": ["replicas"], "properties": {
       "replicas": {"type": "integer", "minimum": 1, "format": "int32"},
       "name": {"type": "string", "nullable": true, "pattern": "^[a-z]+$"},
       "tags": {"type": "array", "items": {"type": "string"}},
       "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
       "port": {"x-kubernetes-int-or-string": true}}},
     "status": {"type": "object", "properties": {"replicas": {"type": "integer"}}}}}}}]}}
JSON
first=""
same=yes
for server in "$@"; do
    name=${server%%=*}; kubeconfig=${server#*=}
    kubectl --kubeconfig "$kubeconfig" apply -f "$crd" >/dev/null
    # The real server publishes a new CRD in /openapi/v2 a moment later.
    for _ in $(seq 1 50); do
        kubectl --kubeconfig "$kubeconfig" get --raw /openapi/v2 | grep -q dev.kcache.example.v1.Widget && break
        sleep 0.2
    done
    out=$("$bin" "$kubeconfig" 2>&1) || true
    echo "== $name"; echo "$out"
    if [ -z "$first" ]; then first=$out; elif [ "$out" != "$first" ]; then same=no; fi
    kubectl --kubeconfig "$kubeconfig" delete -f "$crd" >/dev/null
done
rm -f "$bin" "$crd"
echo "every server the same: $same"
[ "$same" = yes ]
