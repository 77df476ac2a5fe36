#!/usr/bin/env bash
# Kindling's cluster mode measured with 1, 2 and 3 nodes, and the single process with its file
# log as the baseline, all in one run on this machine:
#
#   swift build -c release --product kindling && swift build -c release --product kindling-bench
#   scripts/cluster-bench.sh
#
# It starts a three-server NATS JetStream cluster (file storage, loopback ports, a temporary
# directory), then 1, 2 and 3 fresh `kindling serve --cluster` nodes in turn, and runs the same
# kindling-bench loads against all the nodes of each (`--url` once per node:
# connections spread round-robin, the writer and the namespace's leader on the first node). The
# baseline is a fresh `kindling serve --data-dir … --fsync always`, driven the same way through --url.
# At the end it prints a table; every run's JSON stays in $RESULTS (default: the temporary
# directory, removed at exit unless RESULTS is given). Every process it started is stopped at exit.
#
# Environment (defaults in brackets):
#   BIN [.build/release]      where kindling and kindling-bench are
#   SUBSCRIBERS [1000]        fanout: listening connections
#   FANOUT_WRITES [2000]      fanout: writes
#   CONNECTIONS [6000]        connections: idle connections (the harness holds them all: ≤ 19,000)
#   WRITERS [64]              writes: writers, each on its own path
#   PIPELINE [16]             writes: writes in flight per writer (a second run uses 1)
#   SECONDS_PER_RUN [3]       writes: seconds measured
#   LEASE [5]                 --lease-seconds of the nodes
#   ROUNDS [1]                how many times to run the whole matrix
#   RESULTS                   keep every run's JSON here
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${BIN:-$root/.build/release}
subscribers=${SUBSCRIBERS:-1000}
fanout_writes=${FANOUT_WRITES:-2000}
connections=${CONNECTIONS:-6000}
writers=${WRITERS:-64}
pipeline=${PIPELINE:-16}
seconds=${SECONDS_PER_RUN:-3}
lease=${LEASE:-5}
rounds=${ROUNDS:-1}

for tool in "$bin/kindling" "$bin/kindling-bench"; do
    [[ -x $tool ]] || { echo "$tool not found: swift build -c release --product kindling && swift build -c release --product kindling-bench" >&2; exit 64; }
done
command -v nats-server > /dev/null || { echo "nats-server not found (apt-get install nats-server)" >&2; exit 64; }
command -v curl > /dev/null || { echo "curl not found" >&2; exit 64; }

work=$(mktemp -d "${TMPDIR:-/tmp}/kindling-cluster-bench.XXXXXX")
results=${RESULTS:-$work/results}
mkdir -p "$results"
pids=()

cleanup() {
    local status=$?
    trap - EXIT INT TERM
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2> /dev/null || true; done
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2> /dev/null || true
        wait "$pid" 2> /dev/null || true
    done
    rm -rf "$work/nats" "$work/local"
    [[ -n ${RESULTS:-} ]] || rm -rf "$work"
    exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The harness needs one descriptor per connection, and so does each server.
ulimit -n "$(ulimit -Hn)"

free_ports() {
    python3 - "$1" << 'EOF'
import socket, sys
sockets = []
for _ in range(int(sys.argv[1])):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    sockets.append(s)
print(" ".join(str(s.getsockname()[1]) for s in sockets))
EOF
}

# --- three NATS servers, one JetStream cluster ---------------------------------------------
read -r -a ports <<< "$(free_ports 9)"
client_ports=("${ports[@]:0:3}") route_ports=("${ports[@]:3:3}") monitor_ports=("${ports[@]:6:3}")
nats_urls=() nats_pids=()
for i in 0 1 2; do
    name="n$((i + 1))"
    dir="$work/nats/$name"
    mkdir -p "$dir"
    routes=()
    for j in 0 1 2; do [[ $j == "$i" ]] || routes+=("\"nats-route://127.0.0.1:${route_ports[$j]}\""); done
    cat > "$dir/server.conf" << EOF
server_name: "$name"
listen: "127.0.0.1:${client_ports[$i]}"
http: "127.0.0.1:${monitor_ports[$i]}"
log_file: "$dir/server.log"
jetstream {
  store_dir: "$dir/jetstream"
  max_memory_store: 268435456
  max_file_store: 4294967296
}
cluster {
  name: "kindling-bench"
  listen: "127.0.0.1:${route_ports[$i]}"
  routes: [$(IFS=,; echo "${routes[*]}")]
}
EOF
    nats-server -c "$dir/server.conf" > /dev/null 2>&1 &
    pids+=($!) nats_pids+=($!)
    nats_urls+=("nats://127.0.0.1:${client_ports[$i]}")
done
for i in 0 1 2; do
    for attempt in $(seq 1 300); do
        [[ $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:${monitor_ports[$i]}/healthz") == 200 ]] && break
        [[ $attempt == 300 ]] && { echo "NATS server n$((i + 1)) not healthy; log:" >&2; tail -20 "$work/nats/n$((i + 1))/server.log" >&2; exit 1; }
        sleep 0.1
    done
done
cluster=$(IFS=,; echo "${nats_urls[*]}")
echo "NATS cluster up: $cluster" >&2

# --- Kindling servers -------------------------------------------------------------------------
# Starts `kindling serve` with the given arguments on a free loopback port, waits for its
# banner, and sets $started_url and $started_pid.
start_kindling() {
    local name=$1
    shift
    local log="$work/$name.log"
    "$bin/kindling" serve --host 127.0.0.1 --port 0 --log-level error "$@" > "$log" 2>&1 &
    started_pid=$!
    pids+=("$started_pid")
    for _ in $(seq 1 600); do
        local line
        line=$(grep -m1 '^Kindling is listening on ' "$log" || true)
        if [[ -n $line ]]; then
            started_url="ws://${line#Kindling is listening on }"
            return
        fi
        kill -0 "$started_pid" 2> /dev/null || { echo "$name exited; log:" >&2; cat "$log" >&2; exit 1; }
        sleep 0.1
    done
    echo "$name did not start; log:" >&2
    cat "$log" >&2
    exit 1
}

loadavg() { cut -d' ' -f1-3 /proc/loadavg; }

# Messages in the KINDLING_LOG stream (one per published batch), the most any NATS server has.
log_messages() {
    local port most=0 count
    for port in "${monitor_ports[@]}"; do
        count=$(curl -s "http://127.0.0.1:$port/jsz?streams=true" | python3 -c '
import json, sys
try:
    data = json.load(sys.stdin)
except ValueError:
    data = {}
print(sum(s["state"]["messages"] for a in data.get("account_details") or [] for s in a.get("stream_detail") or [] if s.get("name") == "KINDLING_LOG"))')
        ((count > most)) && most=$count
    done
    echo "$most"
}

# CPU seconds the NATS servers have used so far (user + system, from /proc).
nats_cpu() {
    local pid total=0 fields
    for pid in "${nats_pids[@]}"; do
        read -r -a fields < <(sed 's/^.*) //' "/proc/$pid/stat")
        total=$((total + fields[11] + fields[12]))
    done
    python3 -c "import os, sys; print(int(sys.argv[1]) / os.sysconf('SC_CLK_TCK'))" "$total"
}

# Runs one kindling-bench load against the servers in $target_urls / $target_pids; the JSON
# goes to $results/<round>-<label>-<load>.json and the load average beside it.
bench() {
    local label=$1 load=$2
    shift 2
    local file="$results/$round-$label-$load.json"
    echo "[$(date -u +%H:%M:%S)] $label: $load (load $(loadavg))" >&2
    loadavg > "${file%.json}.load"
    local before cpu_before started
    before=$(log_messages) cpu_before=$(nats_cpu) started=$(date +%s.%N)
    "$bin/kindling-bench" "$@" --url "$target_urls" --server-pid "$target_pids" --json --no-progress > "$file"
    python3 -c "import sys, time; print((float(sys.argv[1]) - float(sys.argv[2])) / (time.time() - float(sys.argv[3])))" \
        "$(nats_cpu)" "$cpu_before" "$started" > "${file%.json}.nats"
    echo $(($(log_messages) - before)) > "${file%.json}.batches"
}

# The loads, idle connections first: the memory they measure is the growth of a fresh process.
run_loads() {
    local label=$1 mode=$2
    bench "$label" connections connections --count "$connections"
    bench "$label" fanout fanout --subscribers "$subscribers" --writes "$fanout_writes"
    bench "$label" writes writes --writers "$writers" --pipeline "$pipeline" --seconds "$seconds" --fsync "$mode"
    bench "$label" writes1 writes --writers "$writers" --pipeline 1 --seconds "$seconds" --fsync "$mode"
}

# Stops the Kindling servers in $target_pids (SIGTERM, then SIGKILL after 10 s).
stop_targets() {
    local pid
    for pid in ${target_pids//,/ }; do kill -TERM "$pid" 2> /dev/null || true; done
    for pid in ${target_pids//,/ }; do
        for _ in $(seq 1 100); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
        kill -KILL "$pid" 2> /dev/null || true
        wait "$pid" 2> /dev/null || true
    done
}

# Every configuration gets fresh Kindling processes, so the memory per connection is measured
# from a server that has not held connections before, and no node leads namespaces of an
# earlier load. The NATS cluster stays up (earlier namespaces' records stay in the stream).
for round in $(seq 1 "$rounds"); do
    rm -rf "$work/local"
    start_kindling "local-$round" --data-dir "$work/local/data" --fsync always
    target_urls=$started_url target_pids=$started_pid
    run_loads local always
    stop_targets
    for count in 1 2 3; do
        urls=() node_pids=()
        for node in $(seq 1 "$count"); do
            start_kindling "kindling-$node-r$round-n$count" --cluster "$cluster" --node-id "kindling-$node" --lease-seconds "$lease"
            urls+=("$started_url") node_pids+=("$started_pid")
        done
        target_urls=$(IFS=,; echo "${urls[*]}")
        target_pids=$(IFS=,; echo "${node_pids[*]}")
        run_loads "cluster$count" cluster
        stop_targets
    done
done

# --- the table --------------------------------------------------------------------------------
python3 - "$results" "$rounds" << 'EOF'
import json, sys
from pathlib import Path

results, rounds = Path(sys.argv[1]), int(sys.argv[2])

def report(round_, label, load):
    path = results / f"{round_}-{label}-{load}.json"
    return json.loads(path.read_text())["reports"][0], (results / f"{round_}-{label}-{load}.load").read_text().split()[0]

def nats_cores(round_, label, load):
    """Cores the three NATS servers used over the whole kindling-bench run (set-up included)."""
    return float((results / f"{round_}-{label}-{load}.nats").read_text())

def per_batch(round_, label, load, r):
    """Acknowledged writes per batch published to the stream (a cluster's group commit)."""
    batches = int((results / f"{round_}-{label}-{load}.batches").read_text())
    return f"{value(r, 'acknowledged writes') / batches:.1f}" if batches > 0 else "-"

def value(r, name):
    return next((m["value"] for m in r["measurements"] if m["name"] == name), float("nan"))

rows = [("local", "local file log, fsync always")] + [(f"cluster{n}", f"cluster, {n} node{'s' if n > 1 else ''}") for n in (1, 2, 3)]
print("| round | servers | fanout deliveries/s (p99) | connections opened/s, KB each | writes/s ×16 in flight (p99) | writes/s ×1 (p50 / p99) | writes per published batch (×16 / ×1) | Kindling cores (fanout / writes ×16) | NATS cores (writes ×16) | load |")
print("|---|---|---|---|---|---|---|---|---|---|")
for round_ in range(1, rounds + 1):
    for label, title in rows:
        fanout, load = report(round_, label, "fanout")
        conn, _ = report(round_, label, "connections")
        writes, _ = report(round_, label, "writes")
        writes1, _ = report(round_, label, "writes1")
        print(
            f"| {round_} | {title} "
            f"| {value(fanout, 'deliveries/s'):,.0f} ({fanout['latencies'][0]['p99']:.0f} ms) "
            f"| {value(conn, 'connections opened/s'):,.0f}, {value(conn, 'server memory per connection'):.2f} KB "
            f"| {value(writes, 'acknowledged writes/s'):,.0f} ({writes['latencies'][0]['p99']:.1f} ms) "
            f"| {value(writes1, 'acknowledged writes/s'):,.0f} ({writes1['latencies'][0]['p50']:.2f} / {writes1['latencies'][0]['p99']:.2f} ms) "
            f"| {per_batch(round_, label, 'writes', writes)} / {per_batch(round_, label, 'writes1', writes1)} "
            f"| {fanout.get('serverCores') or float('nan'):.2f} / {writes.get('serverCores') or float('nan'):.2f} "
            f"| {nats_cores(round_, label, 'writes'):.2f} "
            f"| {load} |"
        )
EOF
