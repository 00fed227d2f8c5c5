#!/usr/bin/env bash
# Builds cgworkqueue (client-go's side of `kcache-bench workqueue --mode ...`) against the client-go
# vendored in Debian's kubernetes 1.20.2 source package, in GOPATH mode, as cgbench's build.sh does.
# Needs that source tree unpacked under $WORK (the envtest assets script unpacks it there).
#   usage: build.sh [OUT]   (default OUT: $HOME/.cache/kcache-envtest/cgworkqueue)
#   cgworkqueue -mode plain|delaying|rate-limited -adds 1000000 -keys 10000 -workers 2
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OUT=${1:-$HOME/.cache/kcache-envtest/cgworkqueue}
WORK=${ENVTEST_WORK:-/var/tmp/kcache-envtest-build}
tree="$WORK/kubernetes-1.20.2"
if [ ! -f "$tree/vendor/github.com/modern-go/reflect2/go_above_118.go" ]; then
  echo "build.sh: $tree is not unpacked; unpack the kubernetes 1.20.2 source package there first (the envtest assets script does)" >&2
  exit 1
fi
export GOPATH="$WORK/gopath" GOCACHE="$WORK/gocache" GO111MODULE=off CGO_ENABLED=0 GOFLAGS=
mkdir -p "$GOPATH/src/k8s.io/kubernetes/cmd/cgworkqueue" "$(dirname "$OUT")"
rm -f "$GOPATH/src/k8s.io/kubernetes/cmd/cgworkqueue/"*.go
cp "$here"/*.go "$GOPATH/src/k8s.io/kubernetes/cmd/cgworkqueue/"
cd "$GOPATH/src/k8s.io/kubernetes" && go build -o "$OUT" ./cmd/cgworkqueue
echo "$OUT"
