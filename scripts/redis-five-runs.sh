#!/usr/bin/env bash
# Five runs each of the issue-16 measures against Redis (same invocation each), outputs in OUT_DIR:
# fan-out flat out to 10k and 1k subscribers, write-to-delivery latency at 200 writes/s to 1k,
# durable writes 256 x 16 and 256 x 1 in flight, contended seats (no Redis peer).
#   scripts/redis-five-runs.sh BIN_DIR [OUT_DIR]   (BIN_DIR holds release kindling and kindling-bench)
set -u
BIN="${1:?bin dir}"; OUT="${2:-.}"
for i in 1 2 3 4 5; do
  "$BIN/kindling-bench" fanout --subscribers 10000 --writes 300 --compare redis --kindling "$BIN/kindling" > "$OUT/fanout-$i.txt" 2>&1
  "$BIN/kindling-bench" fanout --subscribers 1000 --writes 3000 --compare redis --kindling "$BIN/kindling" > "$OUT/fanout1k-$i.txt" 2>&1
  "$BIN/kindling-bench" fanout --subscribers 1000 --writes 1000 --rate 200 --compare redis --kindling "$BIN/kindling" > "$OUT/latency1k-$i.txt" 2>&1
  "$BIN/kindling-bench" writes --writers 256 --pipeline 16 --seconds 3 --fsync always --compare redis --kindling "$BIN/kindling" > "$OUT/w16-$i.txt" 2>&1
  "$BIN/kindling-bench" writes --writers 256 --pipeline 1 --seconds 3 --fsync always --compare redis --kindling "$BIN/kindling" > "$OUT/w1-$i.txt" 2>&1
  "$BIN/kindling-bench" seats --students 1000 --locations 100 --seats 8 --seconds 5 --kindling "$BIN/kindling" > "$OUT/seats-$i.txt" 2>&1
  echo "run $i done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
