#!/usr/bin/env bash
# Real MPI jobs under the pvar interposer (issue 19).
#
#   scripts/mpi-tests.sh
#
# 1. MPI: if mpicc.mpich / mpicc.openmpi are missing and we are root (with
#    apt-get), installs MPICH and Open MPI (and libclang-dev, which the
#    rsmpi example needs); missing and not root: a loud SKIPPED and exit 0,
#    unless CI or PVAR_REQUIRE_MPI=1 is set (then exit 1).
# 2. scripts/mpi-build.sh: the interposer (on and compiled out) and the
#    example programs into target/mpi/<flavour>/.
# 3. cargo build -p pvar-cli (the `pvar read` the job tests call).
# 4. cargo test -p pvar-mpi --profile interposer --test jobs
#    (mpi/tests/jobs.rs), with PVAR_REQUIRE_MPI=1 once both MPI libraries
#    are there: a missing build is then a failure, not a skip.
# 5. The rsmpi example (examples/mpi_report.rs, feature `rsmpi`) on 2 Open MPI
#    ranks: exit 0 and a report naming its variable.
#
# Takes a few minutes (most of it compiling); every job has a deadline.

set -euo pipefail
cd "$(dirname "$0")/.."

started=$SECONDS
strict=0
if [[ -n "${CI:-}" || "${PVAR_REQUIRE_MPI:-}" == 1 ]]; then
    strict=1
fi

have() { command -v "$1" >/dev/null 2>&1; }

step() { printf '\n== %s (%ds)\n' "$*" $((SECONDS - started)); }

skip_or_fail() {
    if ((strict)); then
        echo "mpi-tests: FAILED: $* (CI / PVAR_REQUIRE_MPI=1 is set)" >&2
        exit 1
    fi
    printf '\n*** SKIPPED: mpi-tests: %s ***\n\n' "$*" >&2
    exit 0
}

# The `timeout` in front of every long step: a hung build or job must not
# hang the script.
limit() { timeout --kill-after=10 "$@"; }

step "MPI libraries"
missing=()
for f in mpich openmpi; do
    have "mpicc.$f" && have "mpiexec.$f" || missing+=("$f")
done
# libclang's C library (libclang.so / libclang-<version>.so), which rsmpi's
# bindgen loads; libclang-cpp (the C++ one, often installed alone) is not it.
have_libclang() {
    compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null ||
        compgen -G '/usr/lib/x86_64-linux-gnu/libclang-[0-9]*.so*' >/dev/null
}
libclang_missing=0
have_libclang || libclang_missing=1
if ((${#missing[@]} > 0 || libclang_missing)); then
    if [[ $(id -u) == 0 ]] && have apt-get; then
        echo "installing MPICH, Open MPI and libclang-dev (missing: ${missing[*]:-} libclang=$libclang_missing)"
        export DEBIAN_FRONTEND=noninteractive
        limit 600 apt-get update -qq
        limit 900 apt-get install -y -qq mpich libmpich-dev openmpi-bin libopenmpi-dev libclang-dev >/dev/null
    elif ((${#missing[@]} > 0)); then
        skip_or_fail "MPI not installed (${missing[*]}) and not root: apt-get install mpich libmpich-dev openmpi-bin libopenmpi-dev libclang-dev"
    fi
fi
for f in mpich openmpi; do
    have "mpicc.$f" || skip_or_fail "mpicc.$f still missing after the install"
done
mpichversion 2>/dev/null | head -1 || true
mpiexec.openmpi --version 2>/dev/null | head -1 || true

step "scripts/mpi-build.sh"
if [[ ! -x scripts/mpi-build.sh && ! -f scripts/mpi-build.sh ]]; then
    echo "mpi-tests: scripts/mpi-build.sh is missing" >&2
    exit 1
fi
limit 900 bash scripts/mpi-build.sh

step "cargo build --bin pvar"
# (With scripts/test.sh's build selection, PVAR_TEST_BUILD, the binary its
# test stage built is reused.)
# shellcheck disable=SC2086
limit 900 cargo build -q ${PVAR_TEST_BUILD:--p pvar-cli} --bin pvar

step "cargo test -p pvar-mpi --profile interposer --test jobs"
# Both MPI libraries are there now: a flavour that did not build fails.
# The target directory of mpi-build.sh's "on" build: the engine compiled
# there is reused.
CARGO_TARGET_DIR=target/mpi/rust-on PVAR_REQUIRE_MPI=1 limit 900 \
    cargo test -p pvar-mpi --profile interposer --test jobs -- --test-threads=1

step "the rsmpi example (cargo build --features rsmpi --example mpi_report)"
if ! have_libclang; then
    # rsmpi generates its bindings with libclang.
    if ((strict)); then
        echo "mpi-tests: FAILED: no libclang for the rsmpi example (apt-get install libclang-dev)" >&2
        exit 1
    fi
    printf '\n*** SKIPPED: mpi-tests: the rsmpi example (no libclang; apt-get install libclang-dev) ***\n\n' >&2
    exit 0
fi
# rsmpi finds MPI through the compiler wrapper: the Open MPI one.
export MPICC=mpicc.openmpi
limit 900 cargo clippy -q -p pvar --all-targets --features rsmpi -- -D warnings
limit 900 cargo test -q --features rsmpi --doc report
if limit 900 cargo build -q --features rsmpi --example mpi_report; then
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    if ! limit 120 mpiexec.openmpi --allow-run-as-root --oversubscribe -n 2 \
        target/debug/examples/mpi_report "$tmp/report.json" >"$tmp/out" 2>&1; then
        cat "$tmp/out" >&2
        echo "mpi-tests: FAILED: the mpi_report example did not exit 0" >&2
        exit 1
    fi
    if ! grep -q ring_msgs "$tmp/out" || ! grep -q '"pvar.report.v2"' "$tmp/report.json" ||
        ! grep -q ring_msgs "$tmp/report.json"; then
        cat "$tmp/out" >&2
        echo "mpi-tests: FAILED: the mpi_report example's report does not name ring_msgs" >&2
        exit 1
    fi
    echo "mpi_report on 2 Open MPI ranks: exit 0, text and JSON reports name ring_msgs"
else
    echo "mpi-tests: FAILED: cargo build --features rsmpi --example mpi_report" >&2
    exit 1
fi

step "mpi-tests: all passed"
