#!/usr/bin/env bash
# Measures the start-up of `kindling serve` on a data directory in a fresh process (as BENCHMARKS.md
# reports it): waits for the "loaded namespace" log line, then prints peak and current resident
# memory and the CPU time used so far, and stops the server.
# Usage: scripts/measure-startup.sh KINDLING_BINARY DATA_DIR
set -euo pipefail
bin=$1
dir=$2
log=$(mktemp)
"$bin" serve --data-dir "$dir" --port 0 --log-level notice >"$log" 2>&1 &
pid=$!
until grep -q "loaded namespace" "$log"; do
    if ! kill -0 "$pid" 2>/dev/null; then
        cat "$log"
        exit 1
    fi
    sleep 0.05
done
grep -E "VmHWM|VmRSS" "/proc/$pid/status"
awk '{ print "CPU: " $14 / 100 " s user, " $15 / 100 " s sys" }' "/proc/$pid/stat"
kill "$pid"
wait "$pid" || true
grep "loaded namespace" "$log"
rm -f "$log"
