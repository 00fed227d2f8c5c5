#!/usr/bin/env bash
# Alternates kcache-bench's and client-go's workqueue scenario, ROUNDS rounds each, for every mode
# and worker count, and prints per case the median adds/s of each side, the ratio of the medians,
# and kcache's slowest round against client-go's median (issue #43's acceptance: median ratio
# ≥ 3× and slowest ≥ 2× in plain mode; ≥ 2× for delaying and rate-limited), then each side's
# median over the rounds run at the VM's fast and at its slow placement (`core_round_trip_ns`).
#   usage: bench/workqueue-compare.sh [ROUNDS]        (default 10)
#   env:   KCACHE_BENCH (default target/release/kcache-bench, built if missing),
#          CG_WORKQUEUE (default ~/.cache/kcache-envtest/cgworkqueue, built by
#          bench/clientgo-workqueue/build.sh if missing), CASES (default: the list below),
#          ADDS (1000000), KEYS (10000), OUT (a directory for the raw JSON lines)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
ROUNDS=${1:-10}
ADDS=${ADDS:-1000000}
KEYS=${KEYS:-10000}
KB=${KCACHE_BENCH:-$root/target/release/kcache-bench}
CG=${CG_WORKQUEUE:-$HOME/.cache/kcache-envtest/cgworkqueue}
CASES=${CASES:-"plain:1 plain:2 plain:4 delaying:2 rate-limited:2"}
OUT=${OUT:-$(mktemp -d /tmp/workqueue-compare.XXXXXX)}
[ -x "$KB" ] || (cd "$root" && cargo build --release -p kcache-bench >&2)
[ -x "$CG" ] || "$root/bench/clientgo-workqueue/build.sh" "$CG" >&2
mkdir -p "$OUT"

median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
# "rounds median" of a file's adds/s over the rounds whose core round trip was (>= 300 ns: slow)
# or was not (fast) the VM's slow placement (see docs/benchmarks.md, workqueue).
placed() { # file, slow|fast
  local v
  v=$(sed -n 's/.*"adds_per_sec":\([0-9.e+]*\).*"core_round_trip_ns":\([0-9.e+]*\).*/\1 \2/p' "$1" |
    awk -v want="$2" '($2 >= 300) == (want == "slow") {print $1}')
  [ -n "$v" ] || { printf '0 rounds'; return; }
  awk -v n="$(wc -l <<<"$v")" -v m="$(median <<<"$v")" 'BEGIN {printf "%d rounds %.2f M", n, m/1e6}'
}

printf '%-14s %7s %8s %12s %12s %7s %12s %9s\n' mode workers rounds kcache_med cgo_med ratio kcache_min min/cgo
for case in $CASES; do
  mode=${case%%:*} workers=${case##*:}
  kf="$OUT/kcache-$mode-$workers.jsonl" gf="$OUT/clientgo-$mode-$workers.jsonl"
  : >"$kf"; : >"$gf"
  for _ in $(seq "$ROUNDS"); do
    "$KB" workqueue --mode "$mode" --adds "$ADDS" --keys "$KEYS" --workers "$workers" >>"$kf"
    # client-go's line gains the placement it ran at, measured just before (kcache's has its own).
    rt=$("$KB" core-round-trip | sed -n 's/.*"core_round_trip_ns":\([0-9.e+]*\).*/\1/p')
    "$CG" -mode "$mode" -adds "$ADDS" -keys "$KEYS" -workers "$workers" |
      sed "s/}\$/,\"core_round_trip_ns\":$rt}/" >>"$gf"
  done
  km=$(sed -n 's/.*"adds_per_sec":\([0-9.e+]*\).*/\1/p' "$kf" | median)
  gm=$(sed -n 's/.*"adds_per_sec":\([0-9.e+]*\).*/\1/p' "$gf" | median)
  kmin=$(sed -n 's/.*"adds_per_sec":\([0-9.e+]*\).*/\1/p' "$kf" | sort -g | head -1)
  awk -v m="$mode" -v w="$workers" -v r="$ROUNDS" -v k="$km" -v g="$gm" -v n="$kmin" 'BEGIN {
    printf "%-14s %7d %8d %10.2f M %10.2f M %6.2fx %10.2f M %8.2fx\n", m, w, r, k/1e6, g/1e6, k/g, n/1e6, n/g }'
  for p in fast slow; do
    printf '  %s placement: kcache %s, client-go %s\n' "$p" "$(placed "$kf" $p)" "$(placed "$gf" $p)"
  done
done
echo "raw lines: $OUT" >&2
