#!/usr/bin/env bash
# The C interface test stage: builds libpvar with cargo, compiles every
# program in tests/c/*.c with the system cc against include/ and the
# library, runs each (each prints "NAME: N passed, M failed" and exits
# non-zero on failure), then checks static linking (with the MPI_T_ symbols
# weakened for PMPI tools), the header's mpi.h coexistence modes, and the
# pkg-config file.
#
#   PVAR_C_PROFILE=release scripts/c-tests.sh   # default: debug
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PVAR_C_PROFILE:-debug}
CC=${CC:-cc}
if [ "$profile" = release ]; then
    cargo build --release --lib
else
    cargo build --lib
fi
libdir="$PWD/target/$profile"
out="$PWD/target/c-tests"
mkdir -p "$out"
cflags=(-std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -g -pthread -Iinclude -Itests/c)
# What a Rust staticlib needs from the system (rustc --print native-static-libs).
static_libs=(-lgcc_s -lutil -lrt -lpthread -lm -ldl -lc)

failed=0
run() {
    local name=$1
    shift
    printf -- '--- %s\n' "$name"
    if "$@"; then :; else
        echo "FAILED: $name"
        failed=$((failed + 1))
    fi
}

# The component of site_macros.c: a shared library it loads with dlopen.
"$CC" "${cflags[@]}" -fPIC -shared tests/c/dl/site_component.c \
    -o "$out/libsite_component.so" -L"$libdir" -Wl,-rpath,"$libdir" -lpvar
export PVAR_SITE_COMPONENT="$out/libsite_component.so"

for src in tests/c/*.c; do
    name=$(basename "$src" .c)
    "$CC" "${cflags[@]}" "$src" -o "$out/$name" \
        -L"$libdir" -Wl,-rpath,"$libdir" -lpvar -lpthread -ldl -lm
    run "$name" "$out/$name"
done

# The static library, with MPI_T_* made weak so that PMPI tools can define
# their own (scripts/weaken-static.sh): the spec's tool example and the
# PMPI wrapper test linked against it.
scripts/weaken-static.sh "$libdir/libpvar.a" "$out/libpvar.a"
for name in umq_tool pmpi_wrapper; do
    "$CC" "${cflags[@]}" "tests/c/$name.c" -o "$out/${name}_static" \
        "$out/libpvar.a" "${static_libs[@]}"
    run "$name (static libpvar.a)" "$out/${name}_static"
done

# Header modes: standalone C++, after an mpi.h, and PVAR_MPI_T_ONLY.
echo "--- header modes"
if command -v c++ >/dev/null 2>&1; then
    c++ -std=c++11 -Wall -Wextra -Werror -Iinclude -x c++ -fsyntax-only tests/c/headers/standalone.c
fi
"$CC" -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only tests/c/headers/standalone.c
"$CC" -std=c11 -pedantic -Wall -Wextra -Werror -DPVAR_NO_UPDATES -Iinclude -fsyntax-only tests/c/headers/standalone.c
"$CC" -std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c/headers/fake_mpi -fsyntax-only \
    tests/c/headers/after_mpi_h.c
"$CC" -std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c/headers/fake_mpi -DPVAR_MPI_T_ONLY \
    tests/c/headers/mpi_t_only.c -o "$out/mpi_t_only" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lpvar -lpthread -ldl -lm
run "header mode PVAR_MPI_T_ONLY" "$out/mpi_t_only"

# pkg-config: generate pvar.pc for this tree and build a program with it.
echo "--- pkg-config"
scripts/pvar-pc.sh "$PWD" "$libdir" "$PWD/include" > "$out/pvar.pc"
if command -v pkg-config >/dev/null 2>&1; then
    # shellcheck disable=SC2046
    "$CC" "${cflags[@]}" tests/c/umq_tool.c -o "$out/umq_tool_pc" \
        $(PKG_CONFIG_PATH="$out" pkg-config --cflags --libs pvar) -Wl,-rpath,"$libdir"
    run "umq_tool (pkg-config)" "$out/umq_tool_pc"
else
    echo "pkg-config not installed: generated $out/pvar.pc only"
fi

if [ "$failed" -ne 0 ]; then
    echo "C interface: $failed program(s) failed"
    exit 1
fi
echo "C interface: all programs passed"
