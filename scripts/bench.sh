#!/usr/bin/env bash
# The benchmark suite against the alternatives, and its report.
#
#   scripts/bench.sh            run everything (a few minutes), then write
#                               docs/benchmarks.md and docs/benchmarks.svg
#   scripts/bench.sh --report   only rewrite the report from the last run
#
# Runs (criterion, quick settings; HTML detail in target/criterion/report):
#   cargo bench --bench alternatives   update costs vs baselines, timers
#   cargo bench --bench tool           reads, read-all, handle/session alloc, cvar reads
#   cargo bench --bench c_component    updates through pvar.h (static, .so)
#   cargo bench --bench memory         bytes per variable/thread/handle
#   cargo bench --bench compile_out    with and without --cfg pvar_compile_out
#   pvar bench --json --threads 2      the 20-second overview (its rows in the report)
# then scripts/bench_report.py parses target/criterion/**/new/estimates.json
# (medians) and the side outputs in target/pvar-bench/ (lost counts of the
# racy global, memory figures, pvar-bench.json).
#
# The timed loops read the calling thread's CPU time by default
# (PVAR_BENCH_CLOCK=cpu: CLOCK_THREAD_CPUTIME_ID), so time slices lost to
# other processes on a shared machine are left out; PVAR_BENCH_CLOCK=wall
# times them with Instant instead.
#
# For a quick look on any machine: `cargo run --release -- bench`.
set -euo pipefail
cd "$(dirname "$0")/.."

target=${CARGO_TARGET_DIR:-target}
export PVAR_BENCH_OUT="$target/pvar-bench"
export PVAR_BENCH_CLOCK="${PVAR_BENCH_CLOCK:-cpu}"
log="$PVAR_BENCH_OUT/bench.log"

stage() { printf '\n==> %s\n' "$*"; }

if [[ "${1:-}" != "--report" ]]; then
    mkdir -p "$PVAR_BENCH_OUT"
    : >"$log"
    echo "$PVAR_BENCH_CLOCK" >"$PVAR_BENCH_OUT/clock"
    # The commit measured (the report may be rewritten later, at another).
    commit=$(git rev-parse --short HEAD 2>/dev/null || echo "?")
    if [ "$commit" != "?" ] && [ -n "$(git status --porcelain --untracked-files=no)" ]; then
        commit="$commit + uncommitted changes"
    fi
    echo "$commit" >"$PVAR_BENCH_OUT/commit"
    cat /proc/loadavg >"$PVAR_BENCH_OUT/load" 2>/dev/null || true
    cargo build --release -p pvar-capi 2>&1 | tee -a "$log" # libpvar.so for benches/c_component.rs
    stage "update costs and timers vs the alternatives (benches/alternatives.rs)"
    cargo bench --bench alternatives 2>&1 | tee -a "$log"
    stage "tool side (benches/tool.rs)"
    cargo bench --bench tool 2>&1 | tee -a "$log"
    stage "C component API, static and libpvar.so (benches/c_component.rs)"
    cargo bench --features ffi --bench c_component 2>&1 | tee -a "$log"
    stage "memory (benches/memory.rs)"
    cargo bench --bench memory 2>&1 | tee -a "$log"
    stage "instrumentation enabled vs compiled out (benches/compile_out.rs)"
    cargo bench --bench compile_out 2>&1 | tee -a "$log"
    # (its own target dir: a RUSTFLAGS change would rebuild everything)
    RUSTFLAGS="--cfg pvar_compile_out" CARGO_TARGET_DIR=target/compile-out \
        cargo bench --bench compile_out 2>&1 | tee -a "$log"
    stage "pvar bench --json (cli/src/bench.rs)"
    pb_clock=()
    if [[ "$PVAR_BENCH_CLOCK" == cpu ]]; then pb_clock=(--cpu-time); fi
    cargo run --release --quiet --bin pvar -- bench --json --threads 2 "${pb_clock[@]}" \
        >"$PVAR_BENCH_OUT/pvar-bench.json" 2>>"$log"
    cat /proc/loadavg >>"$PVAR_BENCH_OUT/load" 2>/dev/null || true
fi

stage "report: docs/benchmarks.md, docs/benchmarks.svg"
python3 scripts/bench_report.py --criterion "$target/criterion" --side "$PVAR_BENCH_OUT" \
    --md docs/benchmarks.md --svg docs/benchmarks.svg
