#!/usr/bin/env bash
# What pvar.h's use-site macros cost against a C thread-local add of the
# same TLS model in the same object (benches/c_site/): the loops built into
# an executable (local-exec), into a dlopen'ed -fPIC library
# (general-dynamic) and into one with PVAR_TLS_MODEL "initial-exec", timed
# interleaved in one run; then each loop's instructions (objdump), so that
# the shapes can be compared. Builds libpvar in release first.
#
#   scripts/c-site-bench.sh [rounds [iterations]]    # default 201 300000
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release -p pvar-capi
CC=${CC:-cc}
libdir="$PWD/target/release"
out="$PWD/target/c-site-bench"
mkdir -p "$out"
cflags=(-std=c11 -O2 -Wall -Wextra -Werror -pthread -Iinclude)
"$CC" "${cflags[@]}" -fPIC -shared -DPFX=gd benches/c_site/loops.c \
    -o "$out/libc_site_gd.so" -L"$libdir" -Wl,-rpath,"$libdir" -lpvar
"$CC" "${cflags[@]}" -fPIC -shared -DPFX=ie '-DPVAR_TLS_MODEL="initial-exec"' \
    benches/c_site/loops.c -o "$out/libc_site_ie.so" -L"$libdir" -Wl,-rpath,"$libdir" -lpvar
"$CC" "${cflags[@]}" benches/c_site/main.c benches/c_site/loops.c \
    -o "$out/c-site-bench" -L"$libdir" -Wl,-rpath,"$libdir" -lpvar -ldl
echo "load: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
C_SITE_BENCH_DIR="$out" "$out/c-site-bench" "$@"
# Each loop's body: the instructions between its loop head and back edge.
echo
echo "instructions per iteration (the loop's hot path, objdump -d):"
for obj in "$out/c-site-bench:exe" "$out/libc_site_gd.so:gd" "$out/libc_site_ie.so:ie"; do
    file=${obj%%:*}
    pfx=${obj##*:}
    for loop in plain macro site_v2; do
        echo "--- ${pfx}_${loop}"
        objdump -d --no-show-raw-insn "$file" |
            awk -v f="<${pfx}_${loop}>:" '$2 == f { on = 1; next } on && /^$/ { exit } on' |
            sed -E 's/^ +[0-9a-f]+:\t//'
    done
done
