#!/usr/bin/env bash
# The C interface test stage: builds libpvar (the pvar-capi package), compiles every
# program in tests/c/*.c with the system cc against include/ and the
# library, runs each (each prints "NAME: N passed, M failed" and exits
# non-zero on failure), then checks static linking (with the MPI_T_ symbols
# weakened for PMPI tools), the header's mpi.h coexistence modes, and
# docs/c-interface.md's install recipe, verbatim (cargo-c in target/tools).
#
#   PVAR_C_PROFILE=release scripts/c-tests.sh   # default: debug
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${PVAR_C_PROFILE:-debug}
CC=${CC:-cc}
if [ "$profile" = release ]; then
    cargo build --release -p pvar-capi
elif [ -n "${PVAR_TEST_BUILD:-}" ]; then
    # scripts/test.sh's selection: its test stage built these already.
    # shellcheck disable=SC2086
    cargo build $PVAR_TEST_BUILD --lib
else
    cargo build -p pvar-capi
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

# Every function include/mpi_t.h declares (MPI_T_x and PMPI_T_x) is exported
# by libpvar.so (capi/src/lib.rs lists them), and no other MPI_T name is.
echo "--- libpvar.so exports what mpi_t.h declares"
declared=$(grep -oE '^int +P?MPI_T_[a-z_]+ *\(' include/mpi_t.h | sed -E 's/^int +//; s/ *\(//' | sort -u)
exported=$(nm -D --defined-only "$libdir/libpvar.so" | awk '{ print $3 }' | grep -E '^P?MPI_T_' | sort -u)
if [ "$declared" != "$exported" ]; then
    echo "FAILED: libpvar.so exports differ from mpi_t.h's declarations:"
    diff <(echo "$declared") <(echo "$exported") || true
    failed=$((failed + 1))
else
    echo "$(echo "$declared" | wc -l) MPI_T_ / PMPI_T_ functions declared and exported"
fi

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

# The same component with its use-site caches in initial-exec TLS
# (PVAR_TLS_MODEL, what a library loaded at startup may choose; glibc also
# grants it to this small dlopen'ed one): thread exit, dlclose and reload
# again.
"$CC" "${cflags[@]}" -fPIC -shared '-DPVAR_TLS_MODEL="initial-exec"' tests/c/dl/site_component.c \
    -o "$out/libsite_component_ie.so" -L"$libdir" -Wl,-rpath,"$libdir" -lpvar
run "site_macros (PVAR_TLS_MODEL initial-exec)" \
    env PVAR_SITE_COMPONENT="$out/libsite_component_ie.so" "$out/site_macros"

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
elif [ -n "${CI:-}" ]; then
    echo "FAILED: no c++ compiler: the header's C++ mode cannot be checked (required in CI)"
    failed=$((failed + 1))
else
    echo "SKIPPED: no c++ compiler: the header's C++ mode is not checked"
fi
"$CC" -std=c99 -pedantic -Wall -Wextra -Werror -Iinclude -fsyntax-only tests/c/headers/standalone.c
"$CC" -std=c11 -pedantic -Wall -Wextra -Werror -DPVAR_NO_UPDATES -Iinclude -fsyntax-only tests/c/headers/standalone.c
"$CC" -std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c/headers/fake_mpi -fsyntax-only \
    tests/c/headers/after_mpi_h.c
"$CC" -std=c99 -Wall -Wextra -Werror -Iinclude -Itests/c/headers/fake_mpi -DPVAR_MPI_T_ONLY \
    tests/c/headers/mpi_t_only.c -o "$out/mpi_t_only" \
    -L"$libdir" -Wl,-rpath,"$libdir" -lpvar -lpthread -ldl -lm
run "header mode PVAR_MPI_T_ONLY" "$out/mpi_t_only"

# The install recipe of docs/c-interface.md, run verbatim (the block after
# the marker comment), from the repository root, with PREFIX in this
# stage's own directory: cargo-c, `cargo cinstall`, pkg-config, a tool that
# runs. cargo-c is the project's own (target/tools/bin, first on the PATH;
# scripts/test.sh builds it there): if the recipe has to install it, it
# goes there too (CARGO_INSTALL_ROOT), never into ~/.cargo/bin.
echo "--- docs/c-interface.md: build, install, use"
export CARGO_INSTALL_ROOT="$PWD/target/tools"
export PATH="$CARGO_INSTALL_ROOT/bin:$PATH"
if ! cargo cinstall --version >/dev/null 2>&1; then
    echo "(cargo-c is not in target/tools/bin: the recipe builds it there, once, about ten minutes)"
fi
recipe=$(awk '/c-tests.sh runs the next block verbatim/ { m = 1; next }
              m && /^```sh/ { b = 1; next }
              b && /^```/ { exit }
              b { print }' docs/c-interface.md)
if [ -z "$recipe" ]; then
    echo "FAILED: no install recipe found in docs/c-interface.md"
    failed=$((failed + 1))
elif ! command -v pkg-config >/dev/null 2>&1 && [ -z "${CI:-}" ]; then
    printf '\n*** SKIPPED: the install recipe needs pkg-config (apt-get install pkg-config) ***\n\n'
else
    rm -rf "$out/prefix"
    run "install recipe (docs/c-interface.md)" \
        env PREFIX="$out/prefix" bash -euo pipefail -c "$recipe"
    rm -f hello_tool
    for f in lib/libpvar.so.0.1.0 lib/libpvar.a include/mpi_t.h include/pvar.h \
        lib/pkgconfig/pvar.pc; do
        [ -e "$out/prefix/$f" ] || { echo "FAILED: not installed: $f"; failed=$((failed + 1)); }
    done
    soname=$(readelf -d "$out/prefix/lib/libpvar.so.0.1.0" | sed -n 's/.*SONAME.*\[\(.*\)\].*/\1/p')
    if [ "$soname" != libpvar.so.0.1 ]; then
        echo "FAILED: SONAME is '$soname', expected libpvar.so.0.1"
        failed=$((failed + 1))
    fi
fi

if [ "$failed" -ne 0 ]; then
    echo "C interface: $failed program(s) failed"
    exit 1
fi
echo "C interface: all programs passed"
