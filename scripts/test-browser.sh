#!/usr/bin/env bash
# Runs only the browser tests (test_browser_sdk.py in compat/python, or tests/python in older
# trees): the official Firebase JS SDK, bundled at test time from its source (never committed;
# KINDLING_JS_SDK_SOURCE, by default /work/.mirror/firebase+firebase-js-sdk/repo), in headless
# Chromium against `kindling serve`: WebSocket, long polling (/.lp), the upgrade, a killed server,
# and a foreign origin.
#
# Installs Debian's esbuild, chromium and chromium-driver when missing (when run as root), and
# .venv from the suite's requirements.txt. KINDLING_BIN skips the build; otherwise a debug build in
# KINDLING_SCRATCH_PATH (default .build). KINDLING_REQUIRE_BROWSER=1 turns the module's skips
# (no SDK source, esbuild or Chromium) into failures; KINDLING_BROWSER_ARTIFACTS=DIR keeps each
# failure's report (SDK log, requests, server log) there. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

suite=compat/python
[ -f "$suite/test_browser_sdk.py" ] || suite=tests/python
module="$suite/test_browser_sdk.py"
[ -f "$module" ] || { echo "test-browser: no test_browser_sdk.py in compat/python or tests/python" >&2; exit 1; }

missing=()
command -v esbuild > /dev/null || missing+=(esbuild)
command -v chromium > /dev/null || command -v chromium-browser > /dev/null || missing+=(chromium)
command -v chromedriver > /dev/null || missing+=(chromium-driver)
if [ ${#missing[@]} -gt 0 ]; then
    if [ "$(id -u)" -eq 0 ]; then
        apt-get update -qq
        DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" > /dev/null
    else
        echo "test-browser: missing ${missing[*]}; install them as root (apt-get install ${missing[*]})" >&2
    fi
fi

python=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
    "$python" -m venv .venv
fi
requirements=$suite/requirements.txt
[ -f "$requirements" ] || requirements=tests/python/requirements.txt
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r "$requirements"

if [ -z "${KINDLING_BIN:-}" ]; then
    scratch=(); [ -n "${KINDLING_SCRATCH_PATH:-}" ] && scratch=(--scratch-path "$KINDLING_SCRATCH_PATH")
    swift build "${scratch[@]}" --product kindling
    KINDLING_BIN="$(swift build "${scratch[@]}" --show-bin-path)/kindling"
fi
export KINDLING_BIN

status=0
.venv/bin/python -m pytest -q -rs "$module" "$@" || status=$?
if [ "$status" -eq 5 ]; then
    echo "test-browser: pytest collected no tests" >&2
    exit 1
fi
exit "$status"
