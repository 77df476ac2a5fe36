#!/usr/bin/env bash
# Paired before/after runs of `kindling-bench writes`: the server's CPU per acknowledged write.
#   scripts/paired-writes.sh BEFORE_BIN AFTER_BIN PIPELINE WRITERS PAIRS [FSYNC]
# BENCH names the kindling-bench executable (default: the release build's).
set -euo pipefail
before=$1 after=$2 pipeline=$3 writers=$4 pairs=$5 fsync=${6:-always}
bench=${BENCH:-"$(dirname "$0")/../.build/release/kindling-bench"}
for _ in $(seq 1 "$pairs"); do
    for binary in "$before" "$after"; do
        "$bench" writes --writers "$writers" --pipeline "$pipeline" --seconds 3 --fsync "$fsync" \
            --kindling "$binary" --no-progress --json 2> /dev/null |
            python3 -c '
import json, sys
report = json.load(sys.stdin)["reports"][0]
rate = next(m["value"] for m in report["measurements"] if m["name"] == "acknowledged writes/s")
cpu = report["serverCores"] * 1e9 / rate
p99 = report["latencies"][0]["p99"]
print(f"{sys.argv[1]}: {rate:,.0f} writes/s, server {cpu:,.0f} ns/write, ack p99 {p99:.1f} ms")
' "$binary"
    done
done
