#!/usr/bin/env bash
# Runs the firebase-admin compatibility suite (compat/python) against a freshly built server,
# then its database and rules tests against a follower node of a cluster on NATS JetStream.
# Creates .venv on first use. KINDLING_SCRATCH_PATH reuses another build directory;
# KINDLING_BIN skips the build and uses that binary.
set -euo pipefail
cd "$(dirname "$0")/.."

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r compat/python/requirements.txt

if [ -z "${KINDLING_BIN:-}" ]; then
    scratch=(); [ -n "${KINDLING_SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$KINDLING_SCRATCH_PATH")
    swift build "${scratch[@]}" --product kindling
    KINDLING_BIN="$(swift build "${scratch[@]}" --show-bin-path)/kindling"
fi
export KINDLING_BIN

status=0
# Two processes, each taking whole files (pytest-xdist): the suite mostly waits (a browser page
# kept idle past the SDK's keep-alive, say), and the browser tests' file alone takes as long as
# all the others together.
.venv/bin/python -m pytest -q -n 3 --dist loadgroup compat/python "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "test-python: pytest collected no tests" >&2
    exit 1
fi
[ "$status" -eq 0 ] || exit "$status"

# The same firebase-admin tests against a follower node of a cluster (three NATS servers, two
# Kindling nodes); needs nats-server, which scripts/setup.sh installs.
if [ $# -eq 0 ]; then
    if command -v nats-server > /dev/null; then
        KINDLING_CLUSTER=1 .venv/bin/python -m pytest -q compat/python/test_admin_db.py compat/python/test_admin_rules.py
    else
        echo "test-python: no nats-server, so the cluster run is skipped" >&2
    fi
fi
