#!/usr/bin/env bash
# The Docker image's binary, tested without Docker: builds it exactly as docker/Dockerfile does
# (docker/build-static.sh), checks it needs no shared library the runtime image lacks, then runs
# it from an empty directory holding nothing but the binary (and the image's rules file):
# emulator mode on loopback, and the image's default command in protected mode. Finally checks
# docker/ names only flags, paths and ports that exist (scripts/check-docker-files.py).
# KINDLING_STATIC_BIN skips the build and checks that binary; KINDLING_STATIC_CONFIGURATION=debug
# builds it in the debug configuration (docker/build-static.sh), as CI does.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

work=$(mktemp -d)
pids=()
cleanup() {
    for pid in "${pids[@]}"; do kill "$pid" 2> /dev/null || true; done
    rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "check-static: $*" >&2; exit 1; }

binary=${KINDLING_STATIC_BIN:-}
if [ -z "$binary" ]; then
    started=$(date +%s)
    ./docker/build-static.sh "$work/build/kindling"
    echo "check-static: static ${KINDLING_STATIC_CONFIGURATION:-release} build took $(( $(date +%s) - started )) s"
    binary=$work/build/kindling
fi
echo "check-static: $(du -h "$binary" | cut -f1) $binary"

# 1. Libraries. The runtime image (debian:bookworm-slim) has glibc, libgcc, libstdc++ and zlib,
# and nothing else may be needed: no libcurl, and nothing of Swift's runtime.
allowed='^(libc|libm|libdl|libpthread|librt|libutil|libgcc_s|libstdc\+\+|libz|ld-linux-x86-64|ld-linux-aarch64)\.so'
needed=$(objdump -p "$binary" | awk '$1 == "NEEDED" { print $2 }')
echo "check-static: needs $(echo $needed)"
for library in $needed; do
    [[ $library =~ $allowed ]] || fail "the binary needs $library, which the runtime image does not have"
done
if ldd "$binary" | grep -E 'not found|libswift|libFoundation|libdispatch|libBlocksRuntime|lib_FoundationICU'; then
    fail "ldd shows a missing library or a Swift runtime library"
fi

# 2. From an empty directory: only the binary, and the rules file the image carries.
run=$work/empty
mkdir -p "$run"
cp "$binary" "$run/kindling"
cp docker/admin-only.rules.json "$run/rules.json"
cd "$run"

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
# Starts the server in the background, waits for its banner line; the pid lands in $server.
start() {
    local log=$1; shift
    ./kindling "$@" > "$log.out" 2> "$log.err" &
    server=$!
    pids+=("$server")
    for _ in $(seq 1 300); do
        grep -q '^Kindling is listening on ' "$log.out" 2> /dev/null && return 0
        kill -0 "$server" 2> /dev/null || { cat "$log.err" >&2; fail "kindling $* exited before listening"; }
        sleep 0.1
    done
    fail "kindling $* did not start within 30 s"
}
stop() {
    kill -TERM "$1"
    wait "$1" || fail "kindling did not exit cleanly on SIGTERM"
}

# Emulator mode on loopback: write and read over REST, with the data in ./d.
port=$(free_port)
start loopback serve --port "$port" --data-dir ./d
grep -q "^Data: $run/d (fsync always)$" loopback.out || fail "the banner does not show the absolute data directory: $(cat loopback.out)"
grep -q "databaseURL: http://127.0.0.1:$port?ns=kindling" loopback.out || fail "the banner has no databaseURL"
curl -fsS -X PUT -d '{"n":1,"s":"héllo"}' "http://127.0.0.1:$port/check/a.json?ns=demo" > /dev/null
[ "$(curl -fsS "http://127.0.0.1:$port/check/a.json?ns=demo")" = '{"n":1,"s":"héllo"}' ] || fail "REST read did not return the write"
# The client commands, with the SDK-style URL.
./kindling set check/b 2 --url "http://127.0.0.1:$port?ns=demo" > /dev/null
[ "$(./kindling get check --url "http://127.0.0.1:$port?ns=demo")" = '{"a":{"n":1,"s":"héllo"},"b":2}' ] || fail "kindling get did not read the writes"
stop "$server"
[ -d d/demo ] || fail "no namespace folder in ./d after writes"

# The image's default command (docker/Dockerfile CMD), with this directory as /data.
port=$(free_port)
if ./kindling serve --host 0.0.0.0 --port "$port" --data-dir ./data --rules ./rules.json > refused.out 2>&1; then
    fail "serve on 0.0.0.0 without a credential started; protected mode should refuse it"
fi
grep -q -- '--allow-open' refused.out || fail "the protected-mode refusal does not name its flags: $(cat refused.out)"
secret=check-static-$(date +%s%N)  # admin secrets are 16 bytes or more
KINDLING_ADMIN_SECRET=$secret start image serve --host 0.0.0.0 --port "$port" --data-dir ./data --rules ./rules.json
status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT -d 1 "http://127.0.0.1:$port/x.json?ns=demo")
[ "$status" = 401 ] || fail "an anonymous write answered $status, expected 401 under the image's rules"
curl -fsS -X PUT -H "Authorization: Bearer $secret" -d '{"ok":true}' "http://127.0.0.1:$port/x.json?ns=demo" > /dev/null
[ "$(KINDLING_ADMIN_SECRET=$secret KINDLING_URL="http://127.0.0.1:$port" ./kindling get x --ns demo)" = '{"ok":true}' ] || fail "the admin could not read its write"
KINDLING_URL="http://127.0.0.1:$port" ./kindling health > /dev/null || fail "kindling health (the image's HEALTHCHECK) failed against a running server"
stop "$server"
if KINDLING_URL="http://127.0.0.1:$port" ./kindling health 2> /dev/null; then fail "kindling health passed with no server"; fi
# The compose example's rules load too.
port=$(free_port)
KINDLING_ADMIN_SECRET=$secret start compose serve --host 0.0.0.0 --port "$port" --data-dir ./compose --rules "$root/docker/rules.json"
stop "$server"

cd "$root"
python3 scripts/check-docker-files.py "$run/kindling"
echo "check-static: ok"
