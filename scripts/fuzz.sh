#!/bin/sh
# Fuzzes Kindling's parsers: the JSON parser, the realtime message decoder and the REST request
# parser. Usage: scripts/fuzz.sh [count per target] [seed] [targets...]
#   KINDLING_LIBFUZZER=1 scripts/fuzz.sh 1000000   runs libFuzzer (with AddressSanitizer) instead
#   of the seeded mutation driver; the count is libFuzzer's -runs.
set -eu
cd "$(dirname "$0")/.."
count=${1:-100000}
seed=${2:-1}
shift $(( $# > 2 ? 2 : $# ))
targets=${*:-json websocket rest}

if [ "${KINDLING_LIBFUZZER:-0}" = 1 ]; then
    # The seeds come from the ordinary build of the driver.
    swift build --product kindling-fuzz
    seeder=$(swift build --show-bin-path)/kindling-fuzz
    build=.build-fuzz
    swift build -c debug --scratch-path "$build" -Xswiftc -sanitize=fuzzer,address -Xswiftc -DKINDLING_LIBFUZZER --product kindling-fuzz
    binary=$(swift build -c debug --scratch-path "$build" --show-bin-path)/kindling-fuzz
    for target in $targets; do
        corpus="$build/corpus-$target"
        "$seeder" "$target" --write-seeds "$corpus"
        echo "libFuzzer: $target, $count runs"
        KINDLING_FUZZ_TARGET=$target "$binary" -runs="$count" -seed="$seed" -max_len=4096 -print_final_stats=1 "$corpus"
    done
else
    # A debug build: overflow and bounds checks as in the tests, and shared with their build.
    swift build --product kindling-fuzz
    binary=$(swift build --show-bin-path)/kindling-fuzz
    for target in $targets; do
        "$binary" "$target" --count "$count" --seed "$seed"
    done
fi
