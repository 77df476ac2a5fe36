#!/usr/bin/env bash
# Runs every test Kindling has: the Swift tests, then the firebase-admin compatibility suite.
# This is the one test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Style first (seconds): the code as .swift-format describes it.
swift format lint --strict --recursive Sources Tests
swift build --build-tests
# The tests start many servers at once in one process: raise its descriptor limit where allowed
# (root may raise the hard limit; anyone the soft one up to it), and say what it is.
ulimit -n 65536 2> /dev/null || ulimit -S -n "$(ulimit -H -n)" 2> /dev/null || true
echo "open descriptors: soft $(ulimit -S -n), hard $(ulimit -H -n); $(nproc) processors"
swift test --skip-build
./scripts/test-python.sh
