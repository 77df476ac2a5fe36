#!/usr/bin/env bash
# Issue 16's five measures with the lean, independent probe (scripts/probe/lean-probe.c) instead
# of kindling-bench: Kindling and Redis side by side, RUNS times, each line the probe's report.
#
#   scripts/lean-probe.sh BIN_DIR [RUNS] [SERVER OPTIONS...]
#
# BIN_DIR holds a release `kindling` (and `kindling-bench` with FLOOR=1); SERVER OPTIONS go to
# `kindling serve` (e.g. --event-loops 1). With FLOOR=1 only the two rows still short of target
# run (p99 at 200 writes/s to 1k, writes 256 × 1), each also against `kindling-bench floor`, a
# bare SwiftNIO answerer with no database: the floor under any SwiftNIO server's figures.
# With UNBATCHED=1, issue 40's four rows in its regime (subscribers read by READERS threads,
# default one per core, the writer at most 8 writes ahead), each against the floor too; with
# AFTER=KINDLING as well, each row also runs that second `kindling` right after BIN_DIR's
# (labelled "kindling-after"), for paired before/after runs with Redis in the same run.
# As kindling-bench does: fan-out against `kindling serve --in-memory` and Redis without an
# append-only file; writes with `--fsync always` against `appendfsync always`, 100-byte values.
# Each line gives the server's CPU per operation and its user and kernel parts (/proc/PID/stat),
# and a writes line the server's context switches per write (all its threads, /proc/PID/task);
# scripts/lean-probe-summary.py turns an UNBATCHED=1 run's output into issue 40's rows. With
# EPOLL_FLOOR=1 as well, each row also runs, after the SwiftNIO floor, `kindling-bench floor
# --io nio-direct` (labelled "floor-direct": SwiftNIO's reads, writes to the socket itself, as
# Kindling's sessions do) and `--io epoll` (labelled "floor-epoll": the same answers served by
# one thread on a bare epoll loop); the two differ only in the read path.
set -euo pipefail
bin=${1:?bin dir}
runs=${2:-1}
shift $(( $# >= 2 ? 2 : 1 ))
work=$(mktemp -d)
trap 'kill $(jobs -p) 2>/dev/null; wait 2>/dev/null; rm -rf "$work"' EXIT
cc -O2 -pthread -o "$work/lean-probe" "$(dirname "$0")/probe/lean-probe.c"
probe=$work/lean-probe

# Starts COMMAND (its PORT argument made a free port below the ephemeral range, which the probe's
# own connections take) in the background, logging to NAME.log, and waits until it serves; sets
# $server (pid) and $port. A port taken meanwhile is retried.
launch() {
    local name=$1
    shift
    for _ in 1 2 3 4 5; do
        port=$(( 20000 + RANDOM % 12000 ))
        rm -rf "$work/data" "$work/$name.log"
        "${@//PORT/$port}" >"$work/$name.log" 2>&1 &
        server=$!
        for _ in $(seq 100); do
            serving "$name" && return
            kill -0 "$server" 2>/dev/null || break
            sleep 0.1
        done
    done
    echo "$name did not start:" >&2; cat "$work/$name.log" >&2; exit 1
}
serving() { if [ "$1" = redis ]; then redis-cli -p "$port" ping >/dev/null 2>&1; else grep -q "listening" "$work/$1.log"; fi; }
start_kindling() { launch kindling "${KINDLING:-$bin/kindling}" serve --host 127.0.0.1 --port PORT --log-level error "$@"; }
# The same row against the AFTER binary, when one is given.
after() {
    [ -n "${AFTER:-}" ] || return 0
    KINDLING=$AFTER "$@" | sed 's/ kindling/ kindling-after/'
}
start_redis() { launch redis redis-server --port PORT --save "" --protected-mode no --maxclients 19000 --dir "$work" "$@"; }
start_floor() { launch floor "$bin/kindling-bench" floor --port PORT "$@"; }
# The other two floors' turns in a row, when asked for (EPOLL_FLOOR=1): COMMAND... runs the
# probe, its PORT and SERVER arguments made each floor's port and pid.
epoll_floor() {
    [ "${EPOLL_FLOOR:-0}" = 1 ] || return 0
    local io label command
    for io in nio-direct epoll; do
        label=floor-${io#nio-}
        start_floor --io "$io"
        command=("${@//PORT/$port}")
        "${command[@]//SERVER/$server}" | sed "s/^\(fanout\|writes\) kindling/\1 $label/"
        stop
    done
}
stop() { kill "$server"; wait "$server" 2>/dev/null || true; rm -f "$work/appendonly.aof"; rm -rf "$work/appendonlydir"; }
# Issue 40's Kindling rows (UNBATCHED=1): fan-out of $shape, writes with $in_flight in flight.
# shellcheck disable=SC2086
fanout_kindling() { start_kindling --in-memory "$@"; READERS=$readers "$probe" fanout ws "$port" $shape "$server"; stop; }
writes_kindling() { start_kindling --data-dir "$work/data" --fsync always "$@"; "$probe" writes ws "$port" 256 "$in_flight" 3 100 "$server"; stop; }

for run in $(seq "$runs"); do
    echo "== run $run ($(date -u +%T), load $(cut -d' ' -f1-3 /proc/loadavg))"
    if [ "${UNBATCHED:-0}" = 1 ]; then
        # Issue 40's regime: subscribers read on every core as fast as they can (READERS threads)
        # and the writer runs at most 8 writes ahead, so few events share a socket write; the
        # writes 256 × 16 and 256 × 1. Each row against the floor, Kindling and Redis in turn.
        readers=${READERS:-$(nproc)}
        for shape in "10000 300 8 0" "1000 3000 8 0"; do
            # shellcheck disable=SC2086
            { start_floor; READERS=$readers "$probe" fanout ws "$port" $shape "$server" | sed 's/^fanout kindling/fanout floor/'; stop; }
            # shellcheck disable=SC2086
            READERS=$readers epoll_floor "$probe" fanout ws PORT $shape SERVER
            fanout_kindling "$@"
            after fanout_kindling "$@"
            # shellcheck disable=SC2086
            { start_redis --appendonly no; READERS=$readers "$probe" fanout redis "$port" $shape "$server"; stop; }
        done
        for in_flight in 16 1; do
            { start_floor; "$probe" writes ws "$port" 256 "$in_flight" 3 100 "$server" | sed 's/^writes kindling/writes floor/'; stop; }
            epoll_floor "$probe" writes ws PORT 256 "$in_flight" 3 100 SERVER
            writes_kindling "$@"
            after writes_kindling "$@"
            { start_redis --appendonly yes --appendfsync always; "$probe" writes redis "$port" 256 "$in_flight" 3 100 "$server"; stop; }
        done
        continue
    fi
    if [ "${FLOOR:-0}" = 1 ]; then
        { start_floor; "$probe" fanout ws "$port" 1000 1000 32 200 "$server" | sed 's/^fanout kindling/fanout floor/'; stop; }
        { start_kindling --in-memory "$@"; "$probe" fanout ws "$port" 1000 1000 32 200 "$server"; stop; }
        { start_redis --appendonly no; "$probe" fanout redis "$port" 1000 1000 32 200 "$server"; stop; }
        { start_floor; "$probe" writes ws "$port" 256 1 3 100 "$server" | sed 's/^writes kindling/writes floor/'; stop; }
        { start_kindling --data-dir "$work/data" --fsync always "$@"; "$probe" writes ws "$port" 256 1 3 100 "$server"; stop; }
        { start_redis --appendonly yes --appendfsync always; "$probe" writes redis "$port" 256 1 3 100 "$server"; stop; }
        continue
    fi
    for shape in "10000 300 32 0" "1000 3000 32 0" "1000 1000 32 200"; do
        # shellcheck disable=SC2086
        { start_kindling --in-memory "$@"; "$probe" fanout ws "$port" $shape "$server"; stop; }
        # shellcheck disable=SC2086
        { start_redis --appendonly no; "$probe" fanout redis "$port" $shape "$server"; stop; }
    done
    for in_flight in 16 1; do
        { start_kindling --data-dir "$work/data" --fsync always "$@"; "$probe" writes ws "$port" 256 "$in_flight" 3 100 "$server"; stop; }
        { start_redis --appendonly yes --appendfsync always; "$probe" writes redis "$port" 256 "$in_flight" 3 100 "$server"; stop; }
    done
done
