#!/usr/bin/env bash
# Builds the `kindling` binary with the Swift runtime and Foundation linked in statically, and
# copies it to $1 without its debug information (symbols stay, for readable crash backtraces). docker/Dockerfile builds the image's binary with this script and
# scripts/check-static.sh tests the binary it makes, so the two never differ.
# KINDLING_STATIC_SCRATCH sets the build directory (default .build-static, apart from the
# debug and release builds, whose products are linked differently), and
# KINDLING_STATIC_CONFIGURATION=debug builds the debug configuration instead of release (CI's
# check of the static link, in three quarters of the time; see .ci/run).
set -euo pipefail
[ $# -eq 1 ] || { echo "usage: docker/build-static.sh OUTPUT" >&2; exit 64; }
output=$1
cd "$(dirname "$0")/.."
build=(swift build -c "${KINDLING_STATIC_CONFIGURATION:-release}" --static-swift-stdlib --product kindling --scratch-path "${KINDLING_STATIC_SCRATCH:-.build-static}")
"${build[@]}"
mkdir -p "$(dirname "$output")"
strip --strip-debug -o "$output" "$("${build[@]}" --show-bin-path)/kindling"
