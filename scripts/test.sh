#!/usr/bin/env bash
# Runs every test Kindling has: the Swift tests, then the firebase-admin compatibility suite.
# This is the one test command; .ci/run calls it.
set -euo pipefail
cd "$(dirname "$0")/.."
# Style first (seconds): the code as .swift-format describes it.
swift format lint --strict --recursive Sources Tests
swift build --build-tests
swift test --skip-build
./scripts/test-python.sh
