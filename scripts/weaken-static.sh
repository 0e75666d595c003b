#!/usr/bin/env bash
# Makes the MPI_T_* symbols of a libpvar.a weak, as an MPI library's
# `#pragma weak MPI_T_x = PMPI_T_x` would (MPI 3.1 §14.2.6): a PMPI tool
# linked statically can then define its own MPI_T_x and call PMPI_T_x
# without a "multiple definition" error. (Rust cannot emit weak symbols,
# and the shared library needs nothing: the executable's definitions
# interpose.) The PMPI_T_* symbols stay strong.
#
#   scripts/weaken-static.sh target/release/libpvar.a out/libpvar.a
set -euo pipefail
in=${1:?usage: weaken-static.sh IN.a OUT.a}
out=${2:?usage: weaken-static.sh IN.a OUT.a}
syms=$(mktemp)
trap 'rm -f "$syms"' EXIT
nm -g --defined-only "$in" 2>/dev/null | awk '$3 ~ /^MPI_T_/ { print $3 }' | sort -u > "$syms"
if [ ! -s "$syms" ]; then
    echo "weaken-static.sh: no MPI_T_ symbols in $in" >&2
    exit 1
fi
objcopy --weaken-symbols="$syms" "$in" "$out"
