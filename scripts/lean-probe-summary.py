#!/usr/bin/env python3
"""Summarizes scripts/lean-probe.sh output (UNBATCHED=1, with or without AFTER=): for each of
issue 40's four rows, every server's CPU per operation run by run, the medians of its user and
kernel parts, and Redis's over Kindling's run by run (the issue's measure).

    UNBATCHED=1 AFTER=... scripts/lean-probe.sh BIN 5 > runs.txt
    scripts/lean-probe-summary.py runs.txt

Each row's lines end with Redis's, so a row is the lines up to and including a Redis line."""
import re
import statistics
import sys

ROWS = ["fan-out to 10k", "fan-out to 1k", "durable writes, 256 x 16", "durable writes, 256 x 1"]
SERVERS = ["floor", "floor-direct", "floor-epoll", "kindling", "kindling-after", "redis"]
LINE = re.compile(
    r"^(fanout|writes) (\S+?)[: ].*?server [\d.]+ cores \((\d+) ns/(?:delivery|write)"
    r"(?:, ([\d.]+) deliveries/write call)?[:;] user (\d+), kernel (\d+)\)"
)


def read(path):
    """Row name -> server -> list of (ns, user, kernel, deliveries per write call or None)."""
    rows = {row: {server: [] for server in SERVERS} for row in ROWS}
    row = 0
    with open(path) as lines:
        for line in lines:
            if line.startswith("== run"):
                row = 0
                continue
            match = LINE.match(line)
            if not match or row >= len(ROWS):
                continue
            _, server, ns, per_call, user, kernel = match.groups()
            rows[ROWS[row]][server].append((int(ns), int(user), int(kernel), per_call))
            if server == "redis":
                row += 1
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: lean-probe-summary.py LEAN_PROBE_OUTPUT")
    for row, servers in read(sys.argv[1]).items():
        print(f"{row} (server CPU per operation, ns)")
        for server, runs in servers.items():
            if not runs:
                continue
            values = " · ".join(f"{ns:,}" + (f" ({per_call})" if per_call else "") for ns, _, _, per_call in runs)
            user = statistics.median(run[1] for run in runs)
            kernel = statistics.median(run[2] for run in runs)
            print(f"  {server:15} {values}; median {statistics.median(run[0] for run in runs):,.0f} (user {user:,.0f}, kernel {kernel:,.0f})")
        redis = [run[0] for run in servers["redis"]]
        for server in ("floor-direct", "floor-epoll", "kindling", "kindling-after"):
            ours = [run[0] for run in servers[server]]
            if ours and redis:
                ratios = [theirs / mine for theirs, mine in zip(redis, ours)]
                print(f"  Redis / {server}: " + " · ".join(f"{ratio:.2f}" for ratio in ratios) + f" (median {statistics.median(ratios):.2f})")


if __name__ == "__main__":
    main()
