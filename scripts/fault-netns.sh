#!/usr/bin/env bash
# A fault run of a Kindling cluster with every process in its own Linux network namespace:
# three nats-server (JetStream, sync_interval: always) and three `kindling serve --cluster`
# nodes, clients and nodes on one bridge, the NATS routes on another. On each node a writer
# puts unique keys one after another, and a second one increments a counter by REST
# compare-and-set (ETag, if-match), while faults happen. Then every acknowledged write must be
# on every node and on a node started afterwards, the nodes must agree, and the counter must
# hold every acknowledged increment and no more than those whose answer was unknown (504):
# every value it went through was answered 200 or unknown, and 200 at most once.
# Faults, in order: the NATS server leading the log stream cut off from everyone (its ports
# detached from both bridges) and healed; the first NATS server cut off from its peers only
# (its route port detached: its clients stay); the namespace's leader killed (SIGKILL) and
# restarted once its lease has expired; a node paused (SIGSTOP) and resumed; a flapping
# partition (four times, the node leading the namespace then cut off from everyone for 1.5 s
# and healed for 1.5 s); the namespace's leader restarted at once with the same node id, as a
# supervisor restarts a crashed process (SIGKILL, then a start within its lease), and then
# gracefully (SIGTERM, then a start). Before each fault it waits (up to 10 s) for every NATS
# server's /healthz, so NATS's recovery from one fault is not counted as the next one's.
# Prints, per fault, the longest stretch without an acknowledged write anywhere, and the
# longest one node's writer went without one. Six runs on a loaded 2-core machine (noisy;
# docs/cluster.md has them fault by fault): the NATS log leader's cut 6.5-10.4 s, the routes'
# cut 0.08-6.5 s, the leader's kill 2.1-2.2 s (6.5 and 7.7 s in two runs, the lease bucket's
# NATS group still electing), the pause 0.2-2.1 s, the flapping 2.0-3.1 s (one node's writer up
# to 6.1 s), the same-id restarts 0.3-0.7 s (SIGKILL) and 0.07-0.85 s (SIGTERM): a follower
# sends a write its leader left unanswered again to the next leader, so its writer no longer
# waits 5 s for a 504.
#
# Usage: sudo scripts/fault-netns.sh [KINDLING_BINARY] (default .build/debug/kindling)
# Needs root, `ip netns`, curl, python3, and a nats-server 2.11+ ($NATS_SERVER, else
# .venv/bin/nats-server from scripts/setup.sh). Bounded: about a minute and a half; cleans up
# after itself. Not part of scripts/test.sh (it needs root); .ci/run runs it after the tests.
# KEEP_WORK=1 keeps the run's folder (the nodes' and NATS servers' logs, every answer); a failed
# run prints a digest of those logs either way;
# KINDLING_LOG_LEVEL sets the nodes' log level (default warning).
set -euo pipefail
cd "$(dirname "$0")/.."

KINDLING=${1:-.build/debug/kindling}
NATS=${NATS_SERVER:-.venv/bin/nats-server}
LEASE=${LEASE_SECONDS:-2}
[ "$(id -u)" -eq 0 ] || { echo "fault-netns: needs root (network namespaces)" >&2; exit 2; }
[ -x "$KINDLING" ] || { echo "fault-netns: no kindling binary at $KINDLING" >&2; exit 2; }
[ -x "$NATS" ] || { echo "fault-netns: no nats-server at $NATS (run scripts/setup.sh)" >&2; exit 2; }
KINDLING=$(realpath "$KINDLING")
NATS=$(realpath "$NATS")

# Addresses exist only inside the namespaces this script makes (and on its bridge).
NET=10.199.38
BRIDGE=kf38br
ROUTES=kf38rt
WORK=$(mktemp -d /tmp/kindling-fault-XXXXXX)
PIDS=()

# The namespaces and bridges, gone (also what a run that was killed left behind).
remove_network() {
    for ns in kf38-n1 kf38-n2 kf38-n3 kf38-k1 kf38-k2 kf38-k3 kf38-k4; do ip netns del "$ns" 2> /dev/null || true; done
    ip link del "$BRIDGE" 2> /dev/null || true
    ip link del "$ROUTES" 2> /dev/null || true
}

# A failed run's digest, for a CI log that keeps nothing else: when each node led, followed and
# stopped leading (and its other errors), and each NATS server's leader changes.
digest() {
    for log in "$WORK"/k*.log; do
        [ -f "$log" ] || continue
        echo "fault-netns: $(basename "$log" .log), its roles and errors:"
        grep -E " (error|critical) |leading the namespace|following the namespace" "$log" | head -n 60 | cut -c1-300 | sed 's/^/    /' || true
    done
    for log in "$WORK"/n*/log; do
        [ -f "$log" ] || continue
        echo "fault-netns: NATS $(basename "$(dirname "$log")"), its leader changes:"
        grep -iE "leader|quorum" "$log" | head -n 40 | cut -c1-200 | sed 's/^/    /' || true
    done
}

cleanup() {
    local status=$?
    for pid in "${PIDS[@]}"; do kill -CONT "$pid" 2> /dev/null || true; kill -KILL "$pid" 2> /dev/null || true; done
    wait 2> /dev/null || true
    remove_network
    [ "$status" -eq 0 ] || digest
    [ -n "${KEEP_WORK:-}" ] && echo "fault-netns: kept $WORK" || rm -rf "$WORK"
}
trap cleanup EXIT
remove_network

ip link add "$BRIDGE" type bridge
ip addr add "$NET.1/24" dev "$BRIDGE"
ip link set "$BRIDGE" up
ip link add "$ROUTES" type bridge
ip link set "$ROUTES" up

# A namespace NAME with address NET.HOST on the bridge through veth NAME-h.
namespace() {
    local name=$1 host=$2
    ip netns add "$name"
    ip link add "$name-h" type veth peer name eth0 netns "$name"
    ip link set "$name-h" master "$BRIDGE" up
    ip -n "$name" addr add "$NET.$host/24" dev eth0
    ip -n "$name" link set eth0 up
    ip -n "$name" link set lo up
}

# A NATS server's second port, on the routes' bridge, with address NET+1.HOST.
route_port() {
    local name=$1 host=$2
    ip link add "$name-r" type veth peer name eth1 netns "$name"
    ip link set "$name-r" master "$ROUTES" up
    ip -n "$name" addr add "10.199.39.$host/24" dev eth1
    ip -n "$name" link set eth1 up
}

# Cut a namespace off from everyone (its ports leave the bridges), and give it back; cut a
# NATS server off from its peers only, and give its routes back.
cut() {
    ip link set "$1-h" nomaster
    ip link set "$1-r" nomaster 2> /dev/null || true
}
heal() {
    ip link set "$1-h" master "$BRIDGE"
    ip link set "$1-r" master "$ROUTES" 2> /dev/null || true
}
cut_routes() { ip link set "$1-r" nomaster; }
heal_routes() { ip link set "$1-r" master "$ROUTES"; }

start_nats() {
    local i=$1 routes=()
    for j in 1 2 3; do [ "$j" = "$i" ] || routes+=("\"nats-route://10.199.39.1$j:6222\""); done
    mkdir -p "$WORK/n$i"
    cat > "$WORK/n$i/nats.conf" << EOF
server_name: n$i
listen: "$NET.1$i:4222"
http: "$NET.1$i:8222"
jetstream { store_dir: "$WORK/n$i/js", sync_interval: always }
cluster { name: kf38, listen: "10.199.39.1$i:6222", routes: [$(IFS=,; echo "${routes[*]}")] }
EOF
    ip netns exec "kf38-n$i" "$NATS" -c "$WORK/n$i/nats.conf" > "$WORK/n$i/log" 2>&1 &
    PIDS+=($!)
}

URLS="nats://$NET.11:4222,nats://$NET.12:4222,nats://$NET.13:4222"
echo '{"rules":{".read":true,".write":true}}' > "$WORK/rules.json"
declare -A NODE_PID
start_node() {
    local i=$1
    ip netns exec "kf38-k$i" "$KINDLING" serve --host 0.0.0.0 --port 9000 --rules "$WORK/rules.json" --cluster "$URLS" \
        --node-id "kindling-$i" --lease-seconds "$LEASE" --require-fsync --allow-open --log-level "${KINDLING_LOG_LEVEL:-warning}" >> "$WORK/k$i.log" 2>&1 &
    NODE_PID[$i]=$!
    PIDS+=($!)
}

wait_ready() {
    local url=$1
    for _ in $(seq 1 150); do
        [ "$(curl -s -m 1 -o /dev/null -w '%{http_code}' "$url/.ready" || true)" = 200 ] && return 0
        sleep 0.2
    done
    echo "fault-netns: $url never became ready" >&2
    return 1
}

# The number of the node that leads the namespace now, by its own /.metrics (which answers
# loopback only, so each node is asked from inside its namespace); empty when none says so.
namespace_leader() {
    local metrics i
    for i in 1 2 3; do
        metrics=$(ip netns exec "kf38-k$i" curl -s -m 2 "http://127.0.0.1:9000/.metrics" || true)
        if grep -q '^kindling_cluster_namespaces_led [1-9]' <<< "$metrics"; then
            echo "$i"
            return 0
        fi
    done
}

# Who leads the namespace now, for the messages.
leader_name() {
    local leader
    leader=$(namespace_leader)
    if [ -n "$leader" ]; then echo "kindling-$leader"; else echo "no node yet"; fi
}

# Waits (up to 10 s) until every NATS server says it is healthy, its JetStream current
# (/healthz), so the fault named $1 does not start while NATS still recovers from the one
# before (a healed route can hang for its 10 s write deadline, then elect leaders again);
# says how long it waited when it waited, and why it stopped waiting when it gave up.
nats_settled() {
    local started healthy i answer unhealthy=""
    started=$(date +%s%N)
    for _ in $(seq 1 50); do
        healthy=0
        for i in 1 2 3; do
            answer=$(curl -s -m 1 "http://$NET.1$i:8222/healthz" || true)
            if grep -q '"ok"' <<< "$answer"; then healthy=$((healthy + 1)); else unhealthy="n$i: ${answer:-no answer}"; fi
        done
        [ "$healthy" = 3 ] && break
        sleep 0.2
    done
    local waited=$((($(date +%s%N) - started) / 100000000))
    [ "$waited" -ge 5 ] && echo "fault-netns: waited $((waited / 10)).$((waited % 10)) s for NATS to settle before $1"
    [ "$healthy" = 3 ] || echo "fault-netns: NATS has not settled ($unhealthy); $1 goes on"
    return 0
}

# Waits up to 15 s for node $1's process to end (it drains within 10 s of a SIGTERM).
wait_exit() {
    for _ in $(seq 1 75); do
        kill -0 "${NODE_PID[$1]}" 2> /dev/null || { wait "${NODE_PID[$1]}" 2> /dev/null || true; return 0; }
        sleep 0.2
    done
    echo "fault-netns: kindling-$1 did not stop within 15 s of a SIGTERM" >&2
    return 1
}

for i in 1 2 3; do
    namespace "kf38-n$i" "1$i"
    route_port "kf38-n$i" "1$i"
done
for i in 1 2 3 4; do namespace "kf38-k$i" "2$i"; done
for i in 1 2 3; do start_nats "$i"; done
for i in 1 2 3; do
    for _ in $(seq 1 150); do curl -s -m 1 "http://$NET.1$i:8222/healthz" | grep -q ok && break; sleep 0.2; done
done
for i in 1 2 3; do start_node "$i"; done
for i in 1 2 3; do wait_ready "http://$NET.2$i:9000"; done
echo "fault-netns: 3 NATS servers and 3 nodes up (lease $LEASE s)"

ACKED="$WORK/acked"
: > "$ACKED"
# Writes through node $1 for $2 seconds, one after another, each a key of its own (stretch $3);
# records each acknowledged one with its value and when it was acknowledged. A write gets 25 s:
# a node answers within 20 s (a follower sends a write its leader left unanswered again for 20 s).
writer() {
    local node=$1 until=$(($(date +%s) + $2)) stretch=$3 count=0 code
    while [ "$(date +%s)" -lt "$until" ]; do
        count=$((count + 1))
        code=$(curl -s -m 25 -o /dev/null -w '%{http_code}' -X PUT \
            "http://$NET.2$node:9000/w/$stretch-$node-$count.json?ns=faults" -d "$count" || true)
        [ "$code" = 200 ] && echo "$stretch-$node-$count $count $(date +%s.%N)" >> "$ACKED"
    done
}

# Increments /counter through node $1 for $2 seconds by compare-and-set: reads it with its
# ETag, writes the next value if-match, again on 412. Counts the increments acknowledged
# (200) and those whose fate is unknown (504, or no answer in time).
incrementer() {
    local node=$1 until=$(($(date +%s) + $2)) url="http://$NET.2$1:9000/counter.json?ns=faults" head etag value code
    while [ "$(date +%s)" -lt "$until" ]; do
        head=$(curl -s -m 5 -D - -H 'X-Firebase-ETag: true' "$url" || true)
        etag=$(printf '%s' "$head" | tr -d '\r' | sed -n 's/^[Ee][Tt][Aa][Gg]: *//p' | head -1)
        value=$(printf '%s' "$head" | tail -1)
        [ -n "$etag" ] || continue
        [ "$value" = null ] && value=0
        [[ "$value" =~ ^[0-9]+$ ]] || continue
        code=$(curl -s -m 25 -o /dev/null -w '%{http_code}' -X PUT -H "if-match: $etag" "$url" -d "$((value + 1))" || true)
        # Each line: the outcome, the answer, the node, the value written, when.
        case "$code" in
            200) echo "acked $code $node $((value + 1)) $(date +%s.%N)" >> "$WORK/increments" ;;
            # Stale (412), or refused before anything was written (503).
            412 | 503) echo "refused $code $node $((value + 1)) $(date +%s.%N)" >> "$WORK/increments" ;;
            *) echo "unknown $code $node $((value + 1)) $(date +%s.%N)" >> "$WORK/increments" ;;
        esac
    done
}

# A writer and an incrementer on each node for $1 seconds, the stretch named $2 (from its
# start to its last answer; the time between stretches, with no writes, counts for none).
write_for() {
    echo "start $2 $(date +%s.%N)" >> "$WORK/marks"
    local writers=()
    for node in 1 2 3; do
        writer "$node" "$1" "$2" &
        writers+=($!)
        incrementer "$node" "$1" &
        writers+=($!)
    done
    wait "${writers[@]}" || true
    echo "end $2 $(date +%s.%N)" >> "$WORK/marks"
}

write_for 3 "steady"

# 1. The NATS server leading the log stream, cut off for 8 s, then healed.
leader=$(curl -s -m 2 "http://$NET.11:8222/jsz?streams=true" | python3 -c '
import json, sys
for account in json.load(sys.stdin).get("account_details", []):
    for stream in account.get("stream_detail", []):
        if stream["name"] == "KINDLING_LOG": print(stream["cluster"]["leader"])')
echo "fault-netns: cutting off ${leader:-n1}, which leads KINDLING_LOG"
cut "kf38-${leader:-n1}"
write_for 8 "partition-${leader:-n1}"
heal "kf38-${leader:-n1}"
write_for 6 "healed"
nats_settled "the routes' cut"

# 2. The first NATS server (where kindling-1 starts) cut off from its peers, not its clients.
echo "fault-netns: cutting n1's routes"
cut_routes kf38-n1
write_for 8 "routes-n1"
heal_routes kf38-n1
write_for 5 "routes-healed"
nats_settled "the leader's kill"

# 3. The namespace's leader killed and restarted.
holder=$(namespace_leader)
holder=${holder:-1}
echo "fault-netns: killing kindling-$holder, the namespace's leader"
kill -KILL "${NODE_PID[$holder]}"
write_for 5 "kill-kindling-$holder"
start_node "$holder"
wait_ready "http://$NET.2$holder:9000"
write_for 3 "restarted"
nats_settled "the pause"

# 4. A node paused for 6 s (resumed after 6 s, while its own writer still waits for the
# answer to the write it sent the paused node: the stretch ends with that answer).
pause=$((holder % 3 + 1))
echo "fault-netns: pausing kindling-$pause ($(leader_name) leads)"
kill -STOP "${NODE_PID[$pause]}"
write_for 6 "pause-kindling-$pause" &
writing=$!
sleep 6
kill -CONT "${NODE_PID[$pause]}"
wait "$writing" || true
write_for 4 "resumed"
nats_settled "the flapping partition"

# 5. A flapping partition: four times, the node leading the namespace then cut off from
# everyone for 1.5 s and healed for 1.5 s, while the writes go on; the lease (2 s) may change
# hands at each cut, or not. (Flapping the NATS server that leads the log instead is dull: its
# Raft groups elect only after 4 to 9 s, so they ride 1.5 s cuts out and writes just wait.)
write_for 12 "flapping" &
flapping=$!
cuts=()
flapped=$holder
for _ in 1 2 3 4; do
    now=$(namespace_leader)
    flapped=${now:-$flapped}
    cuts+=("kindling-$flapped")
    cut "kf38-k$flapped"
    sleep 1.5
    heal "kf38-k$flapped"
    sleep 1.5
done
echo "fault-netns: flapped ${cuts[*]} (each the namespace's leader when cut)"
wait "$flapping" || true
write_for 2 "flapping-healed"
nats_settled "the same-id restarts"

# 6. The namespace's leader restarted at once with the same node id, as a supervisor restarts a
# crashed process (SIGKILL), within its lease, so the new process takes the lease back; then
# the leader restarted gracefully (SIGTERM, which hands the lease over, then a start).
# restart_leader SIGNAL SECONDS NAME: under writes for SECONDS (the stretch NAME-kindling-N),
# signals the leader and starts it again with its id: at once after KILL, after its exit for TERM.
restart_leader() {
    local signal=$1 seconds=$2 name=$3 node writing
    node=$(namespace_leader)
    node=${node:-1}
    write_for "$seconds" "$name-kindling-$node" &
    writing=$!
    sleep 0.5
    kill "-$signal" "${NODE_PID[$node]}"
    if [ "$signal" = TERM ]; then wait_exit "$node"; fi
    start_node "$node"
    wait_ready "http://$NET.2$node:9000"
    echo "fault-netns: kindling-$node restarted after SIG$signal; $(leader_name) leads"
    wait "$writing" || true
}
restart_leader KILL 6 same-id-kill
restart_leader TERM 4 same-id-term

# Every acknowledged write, on every node and on a node started now.
start_node 4
wait_ready "http://$NET.24:9000"
touch "$WORK/increments"
python3 - "$NET" "$ACKED" "$WORK/marks" "$WORK/increments" << 'EOF'
import json, sys, time, urllib.request
net, acked_file, marks_file, increments_file = sys.argv[1:5]
acked = {}
times = []
by_node = {}
for line in open(acked_file):
    key, value, at = line.split()
    acked[key] = int(value)
    times.append(float(at))
    by_node.setdefault(key.rsplit("-", 2)[1], []).append(float(at))
stretches, starts = [], {}
for line in open(marks_file):
    kind, name, at = line.split()
    if kind == "start":
        starts[name] = float(at)
    else:
        stretches.append((name, starts[name], float(at)))
stretches.sort(key=lambda stretch: stretch[1])
failures = 0
trees = {}
for i in (1, 2, 3, 4):
    tree = None
    for _ in range(100):
        try:
            tree = json.load(urllib.request.urlopen(f"http://{net}.2{i}:9000/w.json?ns=faults", timeout=5)) or {}
        except Exception:
            tree = None
        if tree is not None and all(tree.get(k) == v for k, v in acked.items()):
            break
        time.sleep(0.2)
    trees[i] = tree
    missing = [k for k, v in acked.items() if (tree or {}).get(k) != v]
    if missing:
        failures += 1
        print(f"fault-netns: kindling-{i} lacks {len(missing)} acknowledged writes, e.g. {missing[:5]}")
if len({json.dumps(t, sort_keys=True) for t in trees.values()}) != 1:
    failures += 1
    print("fault-netns: the nodes do not agree")
outcomes = [line.split()[0] for line in open(increments_file)]
acked_increments, unknown = outcomes.count("acked"), outcomes.count("unknown")
counters = set()
for i in (1, 2, 3, 4):
    counters.add(json.load(urllib.request.urlopen(f"http://{net}.2{i}:9000/counter.json?ns=faults", timeout=5)))
counter = counters.pop() if len(counters) == 1 else None
# Each value from 1 to the counter was written once (compare-and-set), so each was answered 200
# or unknown at least once, and 200 at most once. A value only refused (412, 503) yet stored
# fails the run even when an unknown answer hides it from the count.
answers = {}
for line in open(increments_file):
    outcome, code, node, value, at = line.split()
    answers.setdefault(int(value), []).append((outcome, f"{code} via kindling-{node} at {at}"))
# The nodes may disagree, or one may read null: up to the highest number any node reads.
highest = max([c for c in counters | {counter} if isinstance(c, int)] or [0])
refused_yet_stored = [v for v in range(1, highest + 1) if not any(o in ("acked", "unknown") for o, _ in answers.get(v, []))]
acked_twice = [v for v, got in answers.items() if sum(o == "acked" for o, _ in got) > 1]
if counter is None or not (acked_increments <= counter <= acked_increments + unknown) or refused_yet_stored or acked_twice:
    failures += 1
    print(f"fault-netns: the counter reads {counter} on the nodes ({counters}), {acked_increments} increments acknowledged, {unknown} unknown")
    for value in refused_yet_stored:
        print(f"fault-netns: value {value} stored without a 200 or an unknown answer: {[text for _, text in answers.get(value, [])]}")
    for value in acked_twice:
        print(f"fault-netns: value {value} answered 200 twice: {[text for _, text in answers[value]]}")
else:
    print(f"fault-netns: counter {counter}: {acked_increments} compare-and-set increments acknowledged (none lost or doubled), {unknown} answered unknown")
times.sort()


def longest_gap(moments, start, end):
    inside = [start] + sorted(t for t in moments if start <= t <= end) + [end]
    return max(b - a for a, b in zip(inside, inside[1:]))


for name, start, end in stretches:
    gap = longest_gap(times, start, end)
    # The longest a single node's writer went without an acknowledgement: a node whose
    # forwarded write waits for a dead leader shows here, while the others' writes go on.
    node, node_gap = max(((n, longest_gap(moments, start, end)) for n, moments in sorted(by_node.items())), key=lambda pair: pair[1])
    print(
        f"fault-netns: {name}: {sum(1 for t in times if start <= t <= end)} writes acknowledged, longest stretch without one {gap:.2f} s"
        f" (on one node: {node_gap:.2f} s, kindling-{node})")
print(f"fault-netns: {len(acked)} writes acknowledged; {'all' if not failures else 'NOT all'} on every node and a new one")
sys.exit(1 if failures else 0)
EOF
