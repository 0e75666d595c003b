#!/usr/bin/env bash
# Builds the PMPI interposer and the MPI example programs into target/mpi/
# (docs/mpi.md):
#
#   scripts/mpi-build.sh [flavour...]     # flavours: mpich, openmpi
#
# Without arguments: every flavour whose compiler wrapper mpicc.<flavour>
# is installed (the others are named as skipped). For each:
#
#   target/mpi/<flavour>/libpvar_mpi.so       the interposer
#   target/mpi/<flavour>/libpvar_mpi_off.so   the same with every update
#                                             compiled out (to measure)
#   target/mpi/<flavour>/<name>               each mpi/examples/<name>.c
#
# The Rust half (mpi/, a static archive) does not depend on the MPI
# library: it is built once per variant, with cargo, into
# target/mpi/rust-on and (--cfg pvar_compile_out) target/mpi/rust-off, then
# linked whole with the C half (mpi/c/*.c, compiled against each
# library's mpi.h) and exported through mpi/c/exports.map. Idempotent:
# cargo and the up-to-date checks below rebuild only what changed.
set -euo pipefail
cd "$(dirname "$0")/.."

all_flavours=(mpich openmpi)
flavours=()
if (($# > 0)); then
    for f in "$@"; do
        case " ${all_flavours[*]} " in
        *" $f "*) ;;
        *)
            echo "mpi-build: unknown flavour '$f' (known: ${all_flavours[*]})" >&2
            exit 2
            ;;
        esac
        if ! command -v "mpicc.$f" >/dev/null 2>&1; then
            echo "mpi-build: mpicc.$f not found" >&2
            exit 1
        fi
        flavours+=("$f")
    done
else
    for f in "${all_flavours[@]}"; do
        if command -v "mpicc.$f" >/dev/null 2>&1; then
            flavours+=("$f")
        else
            echo "mpi-build: skipped $f (no mpicc.$f)"
        fi
    done
fi
if ((${#flavours[@]} == 0)); then
    echo "mpi-build: no MPI compiler wrapper found (mpicc.mpich, mpicc.openmpi)" >&2
    exit 1
fi

out=target/mpi

# The Rust half, with updates on and compiled out.
CARGO_TARGET_DIR=$out/rust-on cargo build --profile interposer -p pvar-mpi
RUSTFLAGS="--cfg pvar_compile_out" CARGO_TARGET_DIR=$out/rust-off \
    cargo build --profile interposer -p pvar-mpi

# True if $1 is missing or older than any of the other files.
stale() {
    local target=$1 dep
    shift
    [[ -e $target ]] || return 0
    for dep in "$@"; do
        [[ $dep -nt $target ]] && return 0
    done
    return 1
}

warnings=(-Wall -Wextra -Werror)
c_sources=(mpi/c/*.c)
c_deps=("${c_sources[@]}" mpi/c/*.h mpi/c/exports.map include/pvar.h scripts/mpi-build.sh)
examples=(mpi/examples/*.c)
example_headers=()
for h in mpi/examples/*.h; do
    [[ -e $h ]] && example_headers+=("$h")
done

for f in "${flavours[@]}"; do
    dir=$out/$f
    mkdir -p "$dir"
    for variant in on off; do
        if [[ $variant == on ]]; then
            lib=$dir/libpvar_mpi.so
            defines=()
        else
            lib=$dir/libpvar_mpi_off.so
            defines=(-DPVAR_MPI_COMPILE_OUT)
        fi
        archive=$out/rust-$variant/interposer/libpvar_mpi_rs.a
        if stale "$lib" "${c_deps[@]}" "$archive"; then
            echo "mpi-build: $lib"
            # -ftls-model=initial-exec: the library is loaded at start-up
            # (LD_PRELOAD or linked), so its thread-locals (the wrappers'
            # caches) sit in the static TLS block: one %fs-relative access,
            # no __tls_get_addr call. -z defs: every symbol resolves now
            # (libmpi, the archive, the system libraries a Rust archive
            # needs), not at the first run.
            "mpicc.$f" -O2 -fPIC -shared -ftls-model=initial-exec "${warnings[@]}" \
                "${defines[@]}" -Iinclude -o "$lib.tmp" "${c_sources[@]}" \
                -Wl,--whole-archive "$archive" -Wl,--no-whole-archive \
                -Wl,--version-script=mpi/c/exports.map -Wl,-z,defs \
                -lgcc_s -lutil -lrt -lpthread -ldl -lm -lc
            mv "$lib.tmp" "$lib"
        fi
    done
    for src in "${examples[@]}"; do
        [[ -e $src ]] || continue
        prog=$dir/$(basename "$src" .c)
        if stale "$prog" "$src" "${example_headers[@]}" scripts/mpi-build.sh; then
            echo "mpi-build: $prog"
            "mpicc.$f" -O2 "${warnings[@]}" -o "$prog" "$src"
        fi
    done
done
echo "mpi-build: done (${flavours[*]}) in $out/"
