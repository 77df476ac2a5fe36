#!/usr/bin/env bash
# Five runs each of the issue-16 measures against Redis (same invocation each), outputs in OUT_DIR:
# fan-out flat out to 10k and 1k subscribers, write-to-delivery latency at 200 writes/s to 1k,
# durable writes 256 x 16 and 256 x 1 in flight, contended seats (no Redis peer).
#   scripts/redis-five-runs.sh BIN_DIR [OUT_DIR]   (BIN_DIR holds release kindling and kindling-bench)
# With FLOOR=1, the two rows still short of target (latency at 200 writes/s, writes 256 x 1) also
# run against `kindling-bench floor`, a bare SwiftNIO answerer with no database, in the same
# way (floor-latency1k-N.txt, floor-w1-N.txt): the floor under any SwiftNIO server's figures.
set -u
BIN="${1:?bin dir}"; OUT="${2:-.}"
mkdir -p "$OUT"
# Runs kindling-bench's ARGS against the floor server on a free port, with its pid for the CPU.
against_floor() {
  local port=$(( 20000 + RANDOM % 12000 ))
  "$BIN/kindling-bench" floor --port "$port" > "$OUT/floor.log" 2>&1 &
  local pid=$!
  for _ in $(seq 100); do grep -q listening "$OUT/floor.log" && break; sleep 0.1; done
  if grep -q listening "$OUT/floor.log"; then
    "$BIN/kindling-bench" "$@" --url "ws://127.0.0.1:$port" --server-pid "$pid"
  else
    echo "the floor did not start:"; cat "$OUT/floor.log"
  fi
  kill "$pid"; wait "$pid" 2>/dev/null
}
for i in 1 2 3 4 5; do
  "$BIN/kindling-bench" fanout --subscribers 10000 --writes 300 --compare redis --kindling "$BIN/kindling" > "$OUT/fanout-$i.txt" 2>&1
  "$BIN/kindling-bench" fanout --subscribers 1000 --writes 3000 --compare redis --kindling "$BIN/kindling" > "$OUT/fanout1k-$i.txt" 2>&1
  "$BIN/kindling-bench" fanout --subscribers 1000 --writes 1000 --rate 200 --compare redis --kindling "$BIN/kindling" > "$OUT/latency1k-$i.txt" 2>&1
  "$BIN/kindling-bench" writes --writers 256 --pipeline 16 --seconds 3 --fsync always --compare redis --kindling "$BIN/kindling" > "$OUT/w16-$i.txt" 2>&1
  "$BIN/kindling-bench" writes --writers 256 --pipeline 1 --seconds 3 --fsync always --compare redis --kindling "$BIN/kindling" > "$OUT/w1-$i.txt" 2>&1
  if [ "${FLOOR:-0}" = 1 ]; then
    against_floor fanout --subscribers 1000 --writes 1000 --rate 200 --compare redis > "$OUT/floor-latency1k-$i.txt" 2>&1
    against_floor writes --writers 256 --pipeline 1 --seconds 3 --fsync always --compare redis > "$OUT/floor-w1-$i.txt" 2>&1
  fi
  "$BIN/kindling-bench" seats --students 1000 --locations 100 --seats 8 --seconds 5 --kindling "$BIN/kindling" > "$OUT/seats-$i.txt" 2>&1
  echo "run $i done $(date -u +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
done
