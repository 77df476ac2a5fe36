#!/usr/bin/env bash
# Per-stage CPU budget of `kindling serve` under a fixed load (issue 16).
#
#   scripts/profile-stages.sh OUT_DIR [BIN_DIR] [LOADS...]
#
# Starts the release `kindling serve` (fsync always), warms it up, then for each load runs
# `kindling-bench` against it while `perf record -e cpu-clock -g` samples the server only.
# The bench's JSON report gives the acknowledged writes (or deliveries) and the server's CPU
# time over the measured window; scripts/perf-stages.py splits that CPU by stage into
# OUT_DIR/<load>.table (markdown rows, nanoseconds per operation), then the top functions.
# Loads (default: all three):
#   writes-p1   kindling-bench writes --writers 64 --pipeline 1  --seconds 6
#   writes-p16  kindling-bench writes --writers 64 --pipeline 16 --seconds 6
# (WRITERS=256 in the environment for the writers of the issue's runs instead of 64)
#   fanout      kindling-bench fanout --subscribers 1000 --writes 3000
#   fanout-rate kindling-bench fanout --subscribers 1000 --writes 1000 --rate 200 (the latency row)
#   fanout-unbatched kindling-bench fanout --subscribers 1000 --writes 3000 --window 8 (issue 40:
#               the harness reads on every core and the writer stays 8 ahead, so few events share a write)
set -euo pipefail
out=${1:?output directory}
bin=${2:-.build/release}
shift $(( $# >= 2 ? 2 : $# ))
loads=("$@"); [ ${#loads[@]} -gt 0 ] || loads=(writes-p1 writes-p16 fanout)
mkdir -p "$out"
data=$(mktemp -d)
port=$(( 20000 + RANDOM % 20000 ))
"$bin/kindling" serve --host 127.0.0.1 --port "$port" --log-level error --data-dir "$data/data" --fsync always >"$out/server.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$data"' EXIT
for _ in $(seq 60); do grep -q "Kindling is listening" "$out/server.log" && break; sleep 0.5; done
url="ws://127.0.0.1:$port"
bench() { "$bin/kindling-bench" "$@" --url "$url" --server-pid "$pid" --no-progress --json; }
bench writes --writers 64 --pipeline 4 --seconds 2 --fsync always >"$out/warmup.json"
for load in "${loads[@]}"; do
  case $load in
    writes-p1) args=(writes --writers "${WRITERS:-64}" --pipeline 1 --seconds 6 --fsync always) ;;
    writes-p16) args=(writes --writers "${WRITERS:-64}" --pipeline 16 --seconds 6 --fsync always) ;;
    fanout) args=(fanout --subscribers 1000 --writes 3000) ;;
    fanout-rate) args=(fanout --subscribers 1000 --writes 1000 --rate 200) ;;
    fanout-unbatched) args=(fanout --subscribers 1000 --writes 3000 --window 8) ;;
  esac
  perf record -q -e cpu-clock -F 2000 -g -p "$pid" -o "$out/$load.perf" 2>/dev/null &
  perfpid=$!
  sleep 0.5
  bench "${args[@]}" >"$out/$load.json"
  kill -INT $perfpid; wait $perfpid || true
  # Server CPU per acknowledged write (or per delivery) over the bench's measured window.
  ns=$(python3 -c 'import json, sys
r = json.load(open(sys.argv[1]))["reports"][0]
m = {x["name"]: x["value"] for x in r["measurements"]}
print(r["serverCores"] * m["duration"] * 1e9 / (m.get("acknowledged writes") or m["deliveries"]))' "$out/$load.json")
  perf script -i "$out/$load.perf" -F tid,ip,sym,dso 2>/dev/null \
    | "$(dirname "$0")/perf-stages.py" "$bin/kindling" --ns-per-op "$ns" >"$out/$load.table"
done
uptime >"$out/uptime.txt"
