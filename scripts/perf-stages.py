#!/usr/bin/env python3
"""Inclusive CPU share per stage from `perf script` output of `kindling serve` (issue 16).

    perf script -i FILE.perf -F tid,ip,sym,dso | scripts/perf-stages.py KINDLING_BINARY [--ns-per-op NS] [--top N]

perf on this machine cannot read the Swift binary's ELF ("cannot get elf header"), so the
kindling frames are symbolised here from `nm` (addresses perf prints are file addresses).
Each stage is a difference of inclusive shares (see MEASURES and STAGES), so the stages do not
overlap; with --ns-per-op (server CPU per write or delivery, from the bench report) each share
is also given in nanoseconds."""
import bisect, subprocess, sys, collections

# Inclusive measures: a sample counts when any frame of its chain matches one of the patterns
# (demangled name contains it; `^X`: starts with X); a pattern that is a tuple matches when
# each of its parts matches some frame (the first frame inside the second, e.g.).
MEASURES = {
    "read": ["readFromSocket"],
    # Frames are read by the session itself since ClientFrameReader (SwiftNIO's decoder before).
    "framedecode": ["WebSocketFrameDecoder.decode", "WebSocketSessionHandler.channelRead"],
    "session": ["WebSocketSessionHandler.receiveUTF8"],
    "message": ["ClientMessage.decode", "CompactRequestEnvelope.decode"],
    "json": ["JSONParser.parse"],
    "readcomplete": ["WebSocketSessionHandler.channelReadComplete", "^Namespace.submit(_:_:)"],
    "drain": ["_dispatch_lane_serial_drain"],
    "submit": ["closure #1 in Namespace.submit"],
    # Since the event loops hand requests over once per turn (EventLoopInbox), an idle
    # namespace runs the submitted block on the loop (DispatchQueue.sync), outside any drain.
    "handoff": ["EventLoopInbox.add", "EventLoopInbox.handOff"],
    "submitinline": [("closure #1 in Namespace.submit", "EventLoopInbox.handOff")],
    "submitqueued": [("closure #1 in Namespace.submit", "_dispatch_lane_serial_drain")],
    "resolve": ["resolveSet", "resolveUpdate"],
    "commit": ["DatabaseState.commit"],
    "fanout": ["ChangeFanout"],
    "finish": ["Namespace.finish"],
    # Since ea6ea46 a block's records are encoded straight into the log's buffer (from
    # Namespace.finish), then handed over whole.
    "append": ["WriteAheadLog.append", "WriteAheadLog.enqueue", "LogRecord.encode"],
    "flushlog": ["WriteAheadLog.flushQueued"],
    # Since 26e6795 an event loop may flush the log itself (flushHere), outside any drain.
    "flushlogqueued": [("WriteAheadLog.flushQueued", "_dispatch_lane_serial_drain")],
    "fdatasync": ["fdatasync"],
    # Before 01c4e9a the namespace's queue released held outputs (Namespace.durable); since,
    # the log's thread does (HeldDeliveries.release) after Namespace.prepare resolved them.
    "durable": ["closure #1 in Namespace.durable"],
    "prepare": ["Namespace.prepare"],
    "release": ["HeldDeliveries.release"],
    "deliver": ["closure #1 in EventLoopOutbox.deliver", "closure #1 in closure #1 in EventLoopOutbox.deliver"],
    # The session's flush, or the loop's flush of every session written (where it is inlined).
    # Since round 4 (DirectSocketOutput) the socket is written from the delivery itself, where
    # the session's flush may be inlined.
    "flush": ["WebSocketSessionHandler.flush", "LoopSessions.flush", ("__GI___libc_write", "EventLoopOutbox.deliver")],
    "pong": ["WebSocketSessionHandler.sendPong"],
}

# The budget: exclusive stages as differences of inclusive measures, in path order.
STAGES = [
    ("socket read (NIO read, kernel recv)", lambda m: m["read"] - m["framedecode"]),
    ("WebSocket frame decode (NIO)", lambda m: m["framedecode"] - m["session"]),
    ("UTF-8 check, reassembly, request to operation", lambda m: m["session"] - m["message"]),
    ("JSON parse", lambda m: m["json"]),
    ("request decode and path validation", lambda m: m["message"] - m["json"]),
    ("hop to the namespace (loop side: submit, or the inbox and DispatchQueue.sync)", lambda m: m["readcomplete"] + m["handoff"] - m["submitinline"]),
    ("namespace queue: Dispatch overhead", lambda m: m["drain"] - m["submitqueued"] - m["flushlogqueued"] - m["durable"]),
    ("validation: resolve the write", lambda m: m["resolve"]),
    ("apply to the tree (commit, without listens)", lambda m: m["commit"] - m["fanout"]),
    ("listen matching (ChangeFanout)", lambda m: m["fanout"]),
    ("rest of request handling (rules check, answer, counts)", lambda m: m["submit"] - m["resolve"] - m["commit"] - m["finish"]),
    ("log encode and append (queue the record)", lambda m: m["append"]),
    ("resolve recipients, gather per loop (prepare)", lambda m: m["prepare"]),
    ("hold until durable (finish, without the append and prepare)", lambda m: m["finish"] - m["append"] - m["prepare"]),
    ("log write(2) and flush bookkeeping", lambda m: m["flushlog"] - m["fdatasync"] - m["release"]),
    ("fsync share (fdatasync)", lambda m: m["fdatasync"]),
    ("release after fsync, dispatch to loops", lambda m: m["durable"] + m["release"]),
    ("ack/event enqueue on the loop", lambda m: m["deliver"] - m["flush"]),
    ("socket write (flush, writev)", lambda m: m["flush"]),
]

def load_symbols(binary):
    out = subprocess.run(["nm", "-n", "--defined-only", binary], capture_output=True, text=True).stdout
    addrs, names = [], []
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[1] in "tTwW":
            addrs.append(int(parts[0], 16)); names.append(parts[2])
    return addrs, names

def demangle(names):
    uniq = sorted(set(names))
    res = subprocess.run(["swift", "demangle", "--simplified"], input="\n".join(uniq), capture_output=True, text=True).stdout.splitlines()
    return dict(zip(uniq, res)) if len(res) == len(uniq) else {n: n for n in uniq}

def matches(pattern, name):
    """`^X`: the name starts with X; otherwise X anywhere in it."""
    return name.startswith(pattern[1:]) if pattern.startswith("^") else pattern in name

def sample_matches(pattern, frames):
    if isinstance(pattern, tuple):
        return all(sample_matches(part, frames) for part in pattern)
    return any(matches(pattern, f) for f in frames)

def main():
    binary = sys.argv[1]
    top = int(sys.argv[sys.argv.index("--top") + 1]) if "--top" in sys.argv else 40
    addrs, names = load_symbols(binary)
    samples, current = [], None
    for line in sys.stdin:
        if not line.strip():
            continue
        if not line.startswith("\t") and not line.startswith(" " * 8):
            current = []; samples.append(current); continue
        parts = line.split(None, 1)
        addr, rest = parts[0], parts[1] if len(parts) > 1 else ""
        if "kindling)" in rest and rest.startswith("[unknown]"):
            i = bisect.bisect_right(addrs, int(addr, 16)) - 1
            current.append(names[i] if i >= 0 else rest)
        else:
            current.append(rest.rsplit(" (", 1)[0])
    demangled = demangle([f for s in samples for f in s])
    total = len(samples)
    per_op = float(sys.argv[sys.argv.index("--ns-per-op") + 1]) if "--ns-per-op" in sys.argv else None
    measures = {}
    named = [[demangled.get(f, f) for f in s] for s in samples]
    for key, patterns in MEASURES.items():
        measures[key] = sum(1 for frames in named if any(sample_matches(p, frames) for p in patterns)) / total
    print(f"samples: {total}" + (f", {per_op:.0f} ns of server CPU per operation" if per_op else ""))
    accounted = 0.0
    for stage, formula in STAGES:
        share = formula(measures)
        accounted += share
        print(f"| {stage} | {100 * share:.1f}% |" + (f" {share * per_op:,.0f} |" if per_op else ""))
    print(f"| everything else (NIO loop, kernel scheduling, other) | {100 * (1 - accounted):.1f}% |" + (f" {(1 - accounted) * per_op:,.0f} |" if per_op else ""))
    print(f"| **total** | 100% |" + (f" **{per_op:,.0f}** |" if per_op else ""))
    inclusive, selfc = collections.Counter(), collections.Counter()
    for s in samples:
        for f in set(s): inclusive[demangled.get(f, f)[:150]] += 1
        if s: selfc[demangled.get(s[0], s[0])[:150]] += 1
    print("\n-- top inclusive --")
    for name, n in inclusive.most_common(top): print(f"{100.0 * n / total:6.2f}%  {name}")
    print("\n-- top self --")
    for name, n in selfc.most_common(top): print(f"{100.0 * n / total:6.2f}%  {name}")

main()
