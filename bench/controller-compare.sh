#!/usr/bin/env bash
# The `controller` scenario against all three peers in one run: kcache (kcache-controller, the
# scenario in a binary of its own: kcache-bench's examples/controller_alone), cgbench (client-go's
# workqueue pattern), krbench (kube-runtime) and crbench (controller-runtime), alternated round by
# round on the same server, then medians per implementation and kcache's ratios to the best peer
# (shared/BENCHMARKS.md, section "controller"). `kcache-bench controller` (the same source in the
# binary of every scenario, whose peak RSS also counts other scenarios' code pages; see
# docs/benchmarks.md) runs in each round too, as the line `kcache-bench`, and so does `kcache-bench
# patch-floor`: the same patches with no controller (HTTP/1.1, a thread blocked reading the
# watch, nothing decoded), the least latency any client can have on this server.
#
#   usage: bench/controller-compare.sh KUBECONFIG [ROUNDS] [NAMESPACE]
#
# The server must hold the namespace's ConfigMaps already (`kcache-bench seed --kubeconfig F
# --configmaps 10000 --namespace bench`). Binaries: KCACHE_CONTROLLER and KCACHE_BENCH (default:
# the bench-release builds in target/, `cargo build --profile bench-release -p kcache-bench --bin
# kcache-bench --example controller_alone`), CGBENCH, KRBENCH, CRBENCH (default: where
# shared/bench's build scripts put them).
# Every JSON line is kept in $OUT (default: a new temp file), whose path is printed first, with the
# server's own mean time per PATCH during that run (`server_patch_ms`, from its /metrics through
# kubectl, when kubectl is on PATH).
set -euo pipefail
kc=${1:?usage: controller-compare.sh KUBECONFIG [ROUNDS] [NAMESPACE]}
rounds=${2:-5}
ns=${3:-bench}
root=$(cd "$(dirname "$0")/.." && pwd)
cache=$HOME/.cache/kcache-envtest
kcache=${KCACHE_CONTROLLER:-$root/target/bench-release/examples/controller_alone}
[ -x "$kcache" ] || kcache=$root/target/release/examples/controller_alone
bench=${KCACHE_BENCH:-$root/target/bench-release/kcache-bench}
[ -x "$bench" ] || bench=$root/target/release/kcache-bench
cg=${CGBENCH:-$cache/cgbench}
kr=${KRBENCH:-$cache/krbench-target/release/krbench}
cr=${CRBENCH:-$cache/crbench}
out=${OUT:-$(mktemp /tmp/controller-compare.XXXXXX.jsonl)}
echo "lines: $out" >&2
for bin in "$kcache" "$bench" "$cg" "$kr" "$cr"; do
  [ -x "$bin" ] || { echo "missing binary: $bin" >&2; exit 2; }
done
# kube-apiserver's own time for the ConfigMap PATCHes (apiserver_request_duration_seconds' sum
# and count, read through kubectl when it is on PATH): a run's mean is its figure.
server_patches() {
  command -v kubectl >/dev/null || { echo "0 0"; return; }
  kubectl --kubeconfig "$kc" get --raw /metrics 2>/dev/null | awk '
    /^apiserver_request_duration_seconds_(sum|count)\{/ && /resource="configmaps"/ && /verb="PATCH"/ {
      if ($1 ~ /_sum/) s = $2; else c = $2 }
    END { print s + 0, c + 0 }'
}
run() { # name, command...: keeps the command's last line (its JSON), tagged with the name and
  # the server's mean time per PATCH during the run (ms; null without kubectl)
  local name=$1; shift
  local line before after server
  before=$(server_patches)
  line=$("$@" 2>/dev/null | tail -n 1)
  after=$(server_patches)
  server=$(echo "$before $after" | awk '{ n = $4 - $2; if (n > 0) printf "%.4f", ($3 - $1) / n * 1000; else print "null" }')
  printf '{"run_as":"%s","server_patch_ms":%s,"line":%s}\n' "$name" "$server" "$line" >>"$out"
  echo "$name: $line (server $server ms per PATCH)" >&2
}
for r in $(seq 1 "$rounds"); do
  echo "round $r/$rounds" >&2
  # The order rotates by one each round, so every implementation runs in every place (first
  # after the previous round's last, and so on) about equally often: a run's tail latency
  # depends on what the server did just before it (with a fixed order, kcache's same code had a
  # median p99 of 3.9 ms run first in every round and 3.0 ms run second).
  for i in $(seq 0 5); do
    case $(( (i + r - 1) % 6 )) in
      0) run kcache "$kcache" --kubeconfig "$kc" --namespace "$ns" --workers 2 --updates 1000 ;;
      1) run kcache-bench "$bench" controller --kubeconfig "$kc" --namespace "$ns" --workers 2 --updates 1000 ;;
      2) run client-go "$cg" -scenario controller -kubeconfig "$kc" -namespace "$ns" -workers 2 -updates 1000 ;;
      3) run kube-runtime "$kr" controller --kubeconfig "$kc" --namespace "$ns" --workers 2 --updates 1000 ;;
      4) run controller-runtime "$cr" -scenario controller -kubeconfig "$kc" -namespace "$ns" -workers 2 -updates 1000 ;;
      5) run patch-floor "$bench" patch-floor --kubeconfig "$kc" --namespace "$ns" --updates 1000 ;;
    esac
  done
done
python3 - "$out" <<'PY'
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
fields = ["initial_reconcile_seconds", "peak_rss_bytes", "latency_req_p50_ms", "latency_req_p99_ms",
          "latency_p50_ms", "latency_p99_ms", "missed", "reconciles", "patch_seconds"]
by = {}
for r in rows:
    by.setdefault(r["run_as"], []).append(r["line"])
# patch-floor has no controller: no initial reconcile, no reconciles (nan in its line).
med = {name: {f: statistics.median(float(l[f]) if l.get(f) is not None else float("nan") for l in lines)
              for f in fields} for name, lines in by.items()}
print("%-20s %s" % ("median of %d rounds" % max(len(v) for v in by.values()), " ".join("%14s" % f[:14] for f in fields)))
for name, m in med.items():
    print("%-20s %s" % (name, " ".join("%14.4g" % m[f] for f in fields)))
for name, lines in by.items():
    print("%-20s p99 by round: %s" % (name, " ".join("%.2f" % l["latency_req_p99_ms"] for l in lines)))
peers = [n for n in med if not n.startswith("kcache") and n != "patch-floor"]
targets = [("initial_reconcile_seconds", 0.5), ("peak_rss_bytes", 0.4),
           ("latency_req_p50_ms", 0.8), ("latency_req_p99_ms", 1.0)]
for f, target in targets:
    best = min(peers, key=lambda n: med[n][f])
    ratio = med["kcache"][f] / med[best][f] if med[best][f] else float("inf")
    print("%-26s kcache %.4g / best %s %.4g = %.3fx (target <= %.1fx) %s" % (
        f, med["kcache"][f], best, med[best][f], ratio, target, "ok" if ratio <= target else "MISSED"))
print("missed (kcache, every round):", [l["missed"] for l in by["kcache"]])
# Where a patch's time goes: the server's own mean per PATCH against the client's round trip
# (patch_seconds / updates); a p50 below the server's own time is out of any client's reach.
srv = {}
for r in rows:
    if r.get("server_patch_ms") is not None:
        srv.setdefault(r["run_as"], []).append(r["server_patch_ms"])
for name in med:
    if name in srv:
        s = statistics.median(srv[name])
        rt = statistics.median(l["patch_seconds"] / l["updates"] * 1e3 for l in by[name])
        print("%-20s server %.3f ms per PATCH, round trip %.3f ms, outside the server %.3f ms"
              % (name, s, rt, rt - s))
if "kcache" in srv:
    best = min(peers, key=lambda n: med[n]["latency_req_p50_ms"])
    print("latency_req p50 target: 0.8 x %.4g = %.4g ms; the server's own mean PATCH: %.4g ms"
          % (med[best]["latency_req_p50_ms"], 0.8 * med[best]["latency_req_p50_ms"],
             statistics.median(srv["kcache"])))
if "patch-floor" in med:
    floor = med["patch-floor"]["latency_req_p50_ms"]
    print("latency_req p50 of patch-floor (no controller): %.4g ms; above it: %s" % (floor, ", ".join(
        "%s %+.3f ms" % (n, med[n]["latency_req_p50_ms"] - floor) for n in med if n != "patch-floor")))
PY
