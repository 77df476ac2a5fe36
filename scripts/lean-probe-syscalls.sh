#!/usr/bin/env bash
# Where a durable write's kernel time goes: the system calls each server makes per write, counted
# by perf's syscall tracepoints, under the lean probe's writes load (issue 40's writes rows).
#
#   scripts/lean-probe-syscalls.sh SERVER IN_FLIGHT [KINDLING]
#
# SERVER is kindling (KINDLING: a release `kindling`, `--fsync always`), redis (Debian's
# redis-server, `appendfsync always`) or floor (KINDLING's directory must hold a release
# `kindling-bench`: the bare SwiftNIO answerer). 256 connections, IN_FLIGHT writes each, 100-byte
# values. perf counts for 1.5 s from a second into the probe's 3 s; each line is a call's count
# and its count per acknowledged write, taking the probe's rate (acks/s over its whole run) as the
# rate in those 1.5 s. The tracepoints slow every call a little, so read the counts, not the
# probe's CPU figures. Needs root (or perf_event_paranoid at most 1) and tracefs.
set -euo pipefail
server=${1:?kindling, redis or floor}
in_flight=${2:?writes in flight per connection}
kindling=${3:-kindling}
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/lean-probe" "$(dirname "$0")/probe/lean-probe.c"
port=$(( 20000 + RANDOM % 12000 ))
protocol=ws
case $server in
    kindling) "$kindling" serve --host 127.0.0.1 --port "$port" --log-level error --data-dir "$work/data" --fsync always >"$work/server.log" 2>&1 & ;;
    redis)
        protocol=redis
        redis-server --port "$port" --save "" --protected-mode no --maxclients 19000 --dir "$work" --appendonly yes --appendfsync always \
            >"$work/server.log" 2>&1 &
        ;;
    floor) "$(dirname "$kindling")/kindling-bench" floor --port "$port" >"$work/server.log" 2>&1 & ;;
    *) echo "SERVER is kindling, redis or floor" >&2; exit 2 ;;
esac
pid=$!
for _ in $(seq 100); do
    if [ "$server" = redis ]; then redis-cli -p "$port" ping >/dev/null 2>&1 && break; else grep -q "listening" "$work/server.log" && break; fi
    kill -0 "$pid" 2>/dev/null || { cat "$work/server.log" >&2; exit 1; }
    sleep 0.1
done
"$work/lean-probe" writes "$protocol" "$port" 256 "$in_flight" 3 100 "$pid" >"$work/probe.txt" &
probe=$!
sleep 1
events=raw_syscalls:sys_enter
for call in read write writev epoll_wait epoll_ctl futex fdatasync fsync; do events+=",syscalls:sys_enter_$call"; done
perf stat -x, -e "$events,context-switches" -p "$pid" -- sleep 1.5 2>"$work/perf.txt"
wait "$probe"
cat "$work/probe.txt"
acks=$(grep -oE '[0-9]+ acks/s' "$work/probe.txt" | grep -oE '^[0-9]+')
awk -F, -v acks="$acks" '$1 ~ /^[0-9]+$/ { printf "  %-32s %9d  %.4f per write\n", $3, $1, $1 / (acks * 1.5) }' "$work/perf.txt"
