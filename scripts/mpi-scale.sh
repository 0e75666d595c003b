#!/usr/bin/env bash
# What the cross-rank report costs rank 0, by number of ranks (docs/mpi.md,
# "Scale"):
#
#   scripts/mpi-scale.sh [RANKS...]      # default: 2 4 8 16 32 64
#   SIMULATE="1000 10000 100000" scripts/mpi-scale.sh   # also simulated
#
# Real jobs: mpi/examples/ring on Open MPI (oversubscribed: more ranks than
# cores), the interposer preloaded, the text and JSON reports at
# MPI_Finalize, and PVAR_MPI_REPORT_COST=1, with which rank 0 says what
# its part of the report cost: the time from entering the report to the
# report written (the reduction along the tree included: it waits for the
# other ranks' partials), and the rise of its peak resident set. Then,
# for SIMULATE's sizes, `pvar report simulate` (the same reduction and
# writers over synthetic ranks in one process; rank 0 in a process of its
# own). Needs scripts/mpi-build.sh (openmpi) and cargo build --release -p
# pvar-cli. Runs each job under a deadline.
set -euo pipefail
cd "$(dirname "$0")/.."

sizes=("$@")
((${#sizes[@]})) || sizes=(2 4 8 16 32 64)
lib=$PWD/target/mpi/openmpi/libpvar_mpi.so
ring=$PWD/target/mpi/openmpi/ring
for f in "$lib" "$ring"; do
    [[ -e $f ]] || { echo "mpi-scale: $f missing: run scripts/mpi-build.sh openmpi" >&2; exit 1; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

printf '%6s  %12s  %10s  %10s  %12s  %10s  %8s\n' ranks "report (ms)" "reduce" "write" "rank 0 peak" "JSON" "job (s)"
for n in "${sizes[@]}"; do
    json=$tmp/report-$n.json
    start=$(date +%s.%N)
    if ! timeout --kill-after=10 600 mpiexec.openmpi --allow-run-as-root --oversubscribe -n "$n" \
        -x LD_PRELOAD="$lib" -x PVAR_MPI_REPORT_JSON="$json" -x PVAR_MPI_REPORT_COST=1 \
        "$ring" -i 2 -n 64 >"$tmp/out" 2>"$tmp/err"; then
        cat "$tmp/err" >&2
        echo "mpi-scale: the job of $n ranks failed" >&2
        exit 1
    fi
    end=$(date +%s.%N)
    line=$(grep 'report cost at rank 0' "$tmp/err" | tail -1)
    field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<"$line"; }
    printf '%6s  %12s  %10s  %10s  %12s  %10s  %8.1f\n' "$n" "$(field total_ms)" "$(field reduce_ms)" \
        "$(field write_ms)" "$(field peak_growth) KiB" "$(stat -c %s "$json")" \
        "$(awk -v a="$start" -v b="$end" 'BEGIN { print b - a }')"
done

if [[ -n ${SIMULATE:-} ]]; then
    echo
    # shellcheck disable=SC2086
    target/release/pvar report simulate $SIMULATE
fi
