#!/usr/bin/env bash
# Paired before/after runs of `kindling-bench fanout`: the server's CPU per delivery.
#   scripts/paired-fanout.sh BEFORE_DIR AFTER_DIR SUBSCRIBERS WRITES PAIRS [fanout options...]
# Each DIR holds a release `kindling`; BENCH names the kindling-bench executable (default: the
# release build's). Each run starts its own `kindling serve --in-memory` (as `fanout --compare`
# does) and passes its pid, so the report carries the server's CPU.
set -euo pipefail
before=$1 after=$2 subscribers=$3 writes=$4 pairs=$5
shift 5
bench=${BENCH:-"$(dirname "$0")/../.build/release/kindling-bench"}
one() {
    local dir=$1 data port pid
    shift
    data=$(mktemp -d)
    port=$((20000 + RANDOM % 20000))
    "$dir/kindling" serve --host 127.0.0.1 --port "$port" --log-level error --in-memory >"$data/log" 2>&1 &
    pid=$!
    for _ in $(seq 100); do grep -q "listening" "$data/log" && break; sleep 0.2; done
    "$bench" fanout --subscribers "$subscribers" --writes "$writes" --url "ws://127.0.0.1:$port" \
        --server-pid "$pid" --no-progress --json "$@" 2>/dev/null |
        python3 -c '
import json, sys
report = json.load(sys.stdin)["reports"][0]
values = {m["name"]: m["value"] for m in report["measurements"]}
seconds, deliveries = values["duration"], values["deliveries"]
cpu = report["serverCores"] * seconds * 1e9 / deliveries
p99 = report["latencies"][0]["p99"]
print(f"{sys.argv[1]}: {deliveries / seconds:,.0f} deliveries/s, server {cpu:,.0f} ns/delivery, p99 {p99:.1f} ms")
' "$dir"
    kill "$pid"
    wait "$pid" 2>/dev/null || true
    rm -rf "$data"
}
for _ in $(seq 1 "$pairs"); do
    one "$before" "$@"
    one "$after" "$@"
done
