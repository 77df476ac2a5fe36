#!/usr/bin/env bash
# Runs every test Kindling has: the style check, the Swift SDK as a dependency by version, the
# Swift tests, the documentation's links, then the firebase-admin compatibility suite beside
# the cluster's fault run (where the machine allows network namespaces).
# This is the one test command; .ci/run calls it. On a fresh Debian or Ubuntu machine with Swift
# (as root or with sudo) it first installs what the tests need (scripts/setup.sh); elsewhere it
# names what to install. KINDLING_SCRATCH_PATH names the build folder (swift's --scratch-path).
set -euo pipefail
cd "$(dirname "$0")/.."
# Each step says how long it took, so a slow CI run shows where its time went.
step() { echo "test: $1 took $SECONDS s in all"; }
# Style first (seconds): the code as .swift-format describes it.
swift format lint --strict --recursive Sources Tests
step "the style check"
# No two paths that differ only in case (one folder on macOS's default file system).
collisions=$(git ls-files | awk -F/ '{ p = $1; print p; for (i = 2; i <= NF; i++) { p = p "/" $i; print p } }' | sort -u | tr '[:upper:]' '[:lower:]' | sort | uniq -d)
if [ -n "$collisions" ]; then
    echo "test: paths that differ only in case: $collisions" >&2
    exit 1
fi
./scripts/setup.sh
step "setup"
scratch=()
[ -n "${KINDLING_SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$KINDLING_SCRATCH_PATH")
# A package depending on this one by version builds KindlingClient
# (scripts/check-sdk-by-version.sh). In a fresh clone it builds in this package's build folder,
# just before this package's build: most of its work is the dependencies (SwiftNIO,
# swift-crypto, swift-nio-ssl), which that build then finds compiled. Once the folder exists,
# it builds in a folder of its own, so this package's build never has to compile its own
# modules again after it.
build_folder=${KINDLING_SCRATCH_PATH:-.build}
if [ -d "$build_folder" ]; then
    ./scripts/check-sdk-by-version.sh debug
else
    KINDLING_SDK_CHECK_SCRATCH=$build_folder ./scripts/check-sdk-by-version.sh debug
fi
step "the SDK by version"
swift build "${scratch[@]}" --build-tests
step "the debug build"
# The tests start many servers at once in one process: raise its descriptor limit where allowed
# (root may raise the hard limit; anyone the soft one up to it), and say what it is.
ulimit -n 65536 2> /dev/null || ulimit -S -n "$(ulimit -H -n)" 2> /dev/null || true
echo "open descriptors: soft $(ulimit -S -n), hard $(ulimit -H -n); $(nproc) processors"
# A crash's backtrace names functions only (no source lines or inlined frames): the full kind
# reads the debug build's DWARF for minutes, and the whole test process waits while it does.
export SWIFT_BACKTRACE="${SWIFT_BACKTRACE:-enable=yes,symbolicate=fast}"
swift test "${scratch[@]}" --skip-build
step "the Swift tests"
./scripts/check-links.py
# The cluster under faults (scripts/fault-netns.sh: every process in a network namespace of its
# own; root; about a minute and a half): every acknowledged write on every node, no
# compare-and-set increment lost or doubled. It runs beside the firebase-admin suite, since
# the two together use about a core of the two (92 and 39 s of CPU): both ended in 76-100 s
# side by side, against about 150 s one after the other. A machine that cannot make network namespaces
# (not root, or a container without the right) says so and goes on.
fault=""
if [ "$(id -u)" -eq 0 ] && ip netns add kf38-probe 2> /dev/null && ip netns del kf38-probe; then
    ./scripts/fault-netns.sh "$(swift build "${scratch[@]}" --show-bin-path)/kindling" &
    fault=$!
else
    echo "test: the network-namespace fault run is skipped here: no root or no ip netns"
fi
python_status=0
./scripts/test-python.sh || python_status=$?
fault_status=0
if [ -n "$fault" ]; then wait "$fault" || fault_status=$?; fi
[ "$python_status" -eq 0 ] || echo "test: the firebase-admin suite failed (exit $python_status)" >&2
[ "$fault_status" -eq 0 ] || echo "test: the fault run failed (exit $fault_status)" >&2
# An if, not `A && B`: set -e ignores a failure anywhere in such a list but its last command.
if [ "$python_status" -ne 0 ] || [ "$fault_status" -ne 0 ]; then exit 1; fi
step "the firebase-admin suite and the fault run"
