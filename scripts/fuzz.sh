#!/usr/bin/env bash
# Runs every cargo-fuzz target (or those named in FUZZ_TARGETS) for a
# bounded time each: `scripts/fuzz.sh [SECONDS]` (default 60).
#
# Stable toolchain, no sanitizer (`-s none`); builds in fuzz/target, never
# in the main crate's target dir. The committed seeds in fuzz/corpus/<t>
# are read only: new inputs go to fuzz/target/corpus/<t>. Crashes land in
# fuzz/artifacts/<t>/; turn each into a regression test in
# tests/regressions.rs. Not run by scripts/test.sh or CI.
set -euo pipefail

secs="${1:-60}"
cd "$(dirname "$0")/.."

if ! cargo fuzz --version >/dev/null 2>&1; then
    echo "installing cargo-fuzz" >&2
    cargo install cargo-fuzz
fi

targets="${FUZZ_TARGETS:-$(cargo fuzz list)}"
status=0
for t in $targets; do
    work="fuzz/target/corpus/$t"
    mkdir -p "$work" "fuzz/corpus/$t"
    echo "=== $t: ${secs}s" >&2
    cargo fuzz build -s none "$t"
    if ! cargo fuzz run -s none "$t" "$work" "fuzz/corpus/$t" -- \
        -max_total_time="$secs" -print_final_stats=1 -max_len=4096 \
        2> >(tee "fuzz/target/$t.log" >&2); then
        echo "=== $t: FAILED (see fuzz/artifacts/$t/)" >&2
        status=1
    fi
    grep -E "stat::number_of_executed_units|stat::average_exec_per_sec" \
        "fuzz/target/$t.log" | sed "s/^/$t: /" >&2 || true
done
exit "$status"
