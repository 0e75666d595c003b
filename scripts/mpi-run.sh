#!/usr/bin/env bash
# Runs an MPI program under the pvar interposer (docs/mpi.md), adding what
# a first run on a small machine needs, and saying what it adds:
#
#   scripts/mpi-run.sh [-n RANKS] PROGRAM [ARGS...]      # RANKS: default 4
#
# - the MPI library: the one PROGRAM is linked against (MPICH or Open MPI,
#   from `ldd`; a program in target/mpi/<flavour>/ is that flavour's), or
#   PVAR_MPI_FLAVOUR=mpich|openmpi;
# - LD_PRELOAD of that library's interposer, target/mpi/<flavour>/
#   libpvar_mpi.so (scripts/mpi-build.sh builds it, and the example
#   programs next to it);
# - Open MPI's launcher: --allow-run-as-root when run as root,
#   --oversubscribe when RANKS is more than the cores;
# - the caller's PVAR_* variables to every rank (PVAR_EXPORT=1: `pvar top`
#   watches a rank);
# - PVAR_MPI_REPORT_JSON, where rank 0 writes the JSON report: kept if set,
#   else ${TMPDIR:-/tmp}/pvar-mpi-report.<pid>.json (outside the source
#   tree); rank 0 prints the text report on its stderr either way.
#
# It prints the command it runs, so that it can be typed by hand next time.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
ranks=4
if [[ ${1:-} == -n ]]; then
    ranks=${2:?"-n needs a number of ranks"}
    shift 2
fi
if ! [[ $ranks =~ ^[1-9][0-9]*$ ]]; then
    echo "mpi-run: -n $ranks: not a number of ranks" >&2
    exit 2
fi
if (($# == 0)); then
    echo "usage: scripts/mpi-run.sh [-n RANKS] PROGRAM [ARGS...]" >&2
    exit 2
fi
program=$1
shift
if [[ $program != */* ]] && command -v "$program" >/dev/null 2>&1; then
    program=$(command -v "$program")
fi
if [[ ! -x $program ]]; then
    echo "mpi-run: $program: no such program (scripts/mpi-build.sh builds the examples into" >&2
    echo "  target/mpi/<mpich|openmpi>/; your own: mpicc.openmpi app.c -o app)" >&2
    exit 2
fi

# Which MPI library the program uses.
flavour=${PVAR_MPI_FLAVOUR:-}
if [[ -z $flavour ]]; then
    case $(cd "$(dirname "$program")" && pwd) in
    */target/mpi/mpich) flavour=mpich ;;
    */target/mpi/openmpi) flavour=openmpi ;;
    *)
        libs=$(ldd "$program" 2>/dev/null || true)
        if grep -q 'libmpich' <<<"$libs"; then
            flavour=mpich
        elif grep -q 'libmpi\.so' <<<"$libs"; then
            flavour=openmpi
        else
            echo "mpi-run: cannot tell which MPI library $program uses (set PVAR_MPI_FLAVOUR=mpich or openmpi)" >&2
            exit 2
        fi
        ;;
    esac
fi
case $flavour in
mpich | openmpi) ;;
*)
    echo "mpi-run: PVAR_MPI_FLAVOUR=$flavour: expected mpich or openmpi" >&2
    exit 2
    ;;
esac
lib=$root/target/mpi/$flavour/libpvar_mpi.so
if [[ ! -e $lib ]]; then
    echo "mpi-run: $lib is missing: run scripts/mpi-build.sh $flavour first" >&2
    exit 2
fi
if ! command -v "mpiexec.$flavour" >/dev/null 2>&1; then
    echo "mpi-run: mpiexec.$flavour not found" >&2
    exit 2
fi

json=${PVAR_MPI_REPORT_JSON:-${TMPDIR:-/tmp}/pvar-mpi-report.$$.json}
cores=$(nproc)
launcher=()
added=()
env=()
if [[ $flavour == openmpi ]]; then
    if [[ $(id -u) == 0 ]]; then
        launcher+=(--allow-run-as-root)
        added+=("--allow-run-as-root (running as root)")
    fi
    if ((ranks > cores)); then
        launcher+=(--oversubscribe)
        added+=("--oversubscribe ($ranks ranks, $cores cores)")
    fi
    env=(-x "LD_PRELOAD=$lib" -x "PVAR_MPI_REPORT_JSON=$json")
    # The caller's other PVAR_* settings (PVAR_EXPORT=1, PVAR_MPI_*), to
    # every rank.
    for v in $(compgen -e | grep '^PVAR_' | grep -v '^PVAR_MPI_REPORT_JSON$' || true); do
        env+=(-x "$v")
    done
else
    if ((ranks > cores)); then
        echo "mpi-run: note: $ranks MPICH ranks on $cores cores: Debian's MPICH busy-polls, expect it slow" >&2
    fi
    # (MPICH's launcher passes the whole environment to the ranks.)
    env=(-env LD_PRELOAD "$lib" -env PVAR_MPI_REPORT_JSON "$json")
fi
cmd=("mpiexec.$flavour" "${launcher[@]}" -n "$ranks" "${env[@]}" "$program" "$@")
if ((${#added[@]})); then
    said=""
    for a in "${added[@]}"; do
        said+="${said:+; }$a"
    done
    printf 'mpi-run: adds %s\n' "$said"
fi
printf 'mpi-run: the JSON report goes to %s\n' "$json"
printf 'mpi-run:'
printf ' %q' "${cmd[@]}"
printf '\n'
exec "${cmd[@]}"
