#!/usr/bin/env bash
# What the pvar interposer costs an MPI program: 8-byte ping-pong latency
# (mpi/examples/pingpong.c) and message rate (mpi/examples/msgrate.c) on
# 2 ranks, for each MPI library built in target/mpi/ (scripts/mpi-build.sh).
#
#   scripts/mpi-bench.sh            # JOBS=5 jobs per configuration
#   JOBS=9 scripts/mpi-bench.sh
#
# Configurations, interleaved (every round runs each once, in a rotated
# order, so that drift of the machine spreads over all of them):
#   none          the program alone
#   interposer    LD_PRELOAD=libpvar_mpi.so (updates on; timers: collectives)
#   interposer-all  the same with PVAR_MPI_TIME=all (point-to-point and
#                 MPI_Wait* timed too)
#   compiled-out  LD_PRELOAD=libpvar_mpi_off.so (wrappers, no updates)
# and, for Open MPI, the library's own instrumentation and MPI_T:
#   mpit-session  no preload; the program starts a tool session with a
#                 started handle on every Open MPI pvar it can bind
#                 (--mpit-session; its psm2 MTL ones crash and are skipped)
#   monitoring    no preload; Open MPI's monitoring components on
#                 (OMPI_MCA_pml_monitoring_enable=1: Open MPI's own per-peer
#                 message counting, the closest thing to the interposer)
#   monitoring+session  both: the monitoring pvars are then started too
#   baseline      with PVAR_MPI_BASELINE=DIR: LD_PRELOAD=DIR/<flavour>/
#                 libpvar_mpi.so, another build of the interposer (say, the
#                 previous commit's target/mpi copied aside), measured in
#                 the same rounds as this one: before and after a change
# MPICH 4.0.2 as packaged exposes no pvars (0 from MPI_T_pvar_get_num), so
# it has no library MPI_T session to measure. CONFIGS="none interposer ..."
# measures only those (none is always measured: it is the reference).
#
# Each job prints the median of its repetitions, which are short (a few
# hundred microseconds) and many, so that on a shared machine the median
# repetition is one no other process interrupted; the table gives, per
# configuration, the median over jobs (min and max in brackets), the
# ratio of that median to `none`'s, and the median over rounds of the
# ratio to the same round's `none` job with the quartiles of those ratios
# (robust when the machine changes modes between rounds; a warning says
# when it did). Options: JOBS, PINGPONG_ARGS, MSGRATE_ARGS, SELFRATE_ARGS,
# PVAR_MPI_BUILD (default target/mpi), PVAR_MPI_BASELINE, CONFIGS,
# BENCHES (default "pingpong msgrate"; also "selfrate": msgrate --self on
# ONE rank, which needs one idle core instead of two and so shows the
# wrappers' cost best on a shared machine).

set -euo pipefail
cd "$(dirname "$0")/.."

JOBS=${JOBS:-5}
BUILD=${PVAR_MPI_BUILD:-target/mpi}
PINGPONG_ARGS=${PINGPONG_ARGS:--i 200 -w 2000 -r 301}
MSGRATE_ARGS=${MSGRATE_ARGS:--w 64 -i 10 -r 301}
SELFRATE_ARGS=${SELFRATE_ARGS:--w 64 -i 10 -r 501}
JOB_TIMEOUT=${JOB_TIMEOUT:-120}
BASELINE=${PVAR_MPI_BASELINE:-}
BENCHES=${BENCHES:-pingpong msgrate}
read -r -a benches <<<"$BENCHES"
if [[ -n $BASELINE && ! -d $BASELINE ]]; then
    echo "mpi-bench: PVAR_MPI_BASELINE=$BASELINE is not a directory" >&2
    exit 1
fi

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
results=$tmp/results.tsv
: >"$results"

flavours=()
for f in mpich openmpi; do
    d=$BUILD/$f
    if [[ -f $d/libpvar_mpi.so && -f $d/libpvar_mpi_off.so && -x $d/pingpong &&
        -x $d/msgrate ]] && command -v "mpiexec.$f" >/dev/null; then
        flavours+=("$f")
    else
        echo "mpi-bench: no complete build for $f in $d (run scripts/mpi-build.sh); skipped" >&2
    fi
done
if ((${#flavours[@]} == 0)); then
    echo "mpi-bench: nothing to measure" >&2
    exit 1
fi

configs_for() {
    local all=(none interposer interposer-all compiled-out) c out=()
    if [[ $1 == openmpi ]]; then
        all+=(mpit-session monitoring monitoring+session)
    fi
    if [[ -n $BASELINE && -f $BASELINE/$1/libpvar_mpi.so ]]; then
        all+=(baseline)
    fi
    for c in "${all[@]}"; do
        if [[ $c == none || -z ${CONFIGS:-} || " $CONFIGS " == *" $c "* ]]; then
            out+=("$c")
        fi
    done
    echo "${out[@]}"
}

# run_job FLAVOUR CONFIG BENCH: one job; appends its median to $results.
run_job() {
    local f=$1 config=$2 bench=$3 d=$BUILD/$1
    local lib="" session="" envs=() cmd=() args out value
    d=$(cd "$d" && pwd)
    case $config in
    none) ;;
    interposer) lib=$d/libpvar_mpi.so ;;
    interposer-all)
        lib=$d/libpvar_mpi.so
        envs+=(PVAR_MPI_TIME=all)
        ;;
    compiled-out) lib=$d/libpvar_mpi_off.so ;;
    baseline) lib=$(cd "$BASELINE/$f" && pwd)/libpvar_mpi.so ;;
    mpit-session) session=--mpit-session ;;
    monitoring) envs+=(OMPI_MCA_pml_monitoring_enable=1) ;;
    monitoring+session)
        envs+=(OMPI_MCA_pml_monitoring_enable=1)
        session=--mpit-session
        ;;
    esac
    if [[ -n $lib ]]; then
        envs+=("LD_PRELOAD=$lib" PVAR_MPI_REPORT=0)
    fi
    local program=$bench np=2
    case $bench in
    pingpong) args=$PINGPONG_ARGS ;;
    msgrate) args=$MSGRATE_ARGS ;;
    selfrate)
        program=msgrate
        args="$SELFRATE_ARGS --self"
        np=1
        ;;
    esac
    if [[ $f == openmpi ]]; then
        cmd=(mpiexec.openmpi --allow-run-as-root --oversubscribe -n "$np")
        for e in "${envs[@]}"; do cmd+=(-x "$e"); done
    else
        cmd=(mpiexec.mpich -n "$np")
        for e in "${envs[@]}"; do cmd+=(-env "${e%%=*}" "${e#*=}"); done
    fi
    # shellcheck disable=SC2086 # the benchmark arguments are words
    if ! out=$(timeout --kill-after=10 "$JOB_TIMEOUT" "${cmd[@]}" "$d/$program" $args $session 2>&1); then
        echo "mpi-bench: $f $config $bench failed:" >&2
        echo "$out" | tail -20 >&2
        exit 1
    fi
    value=$(echo "$out" | sed -n 's/^MEDIAN [a-z_]*=\([0-9.]*\).*/\1/p')
    if [[ -z $value ]]; then
        echo "mpi-bench: $f $config $bench printed no MEDIAN:" >&2
        echo "$out" | tail -20 >&2
        exit 1
    fi
    printf '%s\t%s\t%s\t%s\t%s\n' "$f" "$bench" "$config" "$value" "$round" >>"$results"
    printf '  %-8s %-19s %-9s %s\n' "$f" "$config" "$bench" "$value" >&2
}

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
echo "mpi-bench: $(nproc) CPUs, load $load_before, $JOBS jobs per configuration;" \
    "pingpong $PINGPONG_ARGS; msgrate $MSGRATE_ARGS; selfrate $SELFRATE_ARGS --self" >&2
for ((j = 0; j < JOBS; j++)); do
    round=$j
    echo "round $((j + 1))/$JOBS" >&2
    for f in "${flavours[@]}"; do
        read -r -a configs <<<"$(configs_for "$f")"
        n=${#configs[@]}
        for ((k = 0; k < n; k++)); do
            config=${configs[$(((k + j) % n))]}
            for bench in "${benches[@]}"; do
                run_job "$f" "$config" "$bench"
            done
        done
    done
done

load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 - "$results" "$JOBS" "$(nproc)" "$load_before" "$load_after" <<'EOF'
import statistics, sys
from collections import defaultdict

rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
jobs = sys.argv[2]
data = defaultdict(list)
by_round = {}
order = {}
for f, bench, config, v, r in rows:
    data[(f, bench, config)].append(float(v))
    by_round[(f, bench, config, r)] = float(v)
    order.setdefault((f, bench), [])
    if config not in order[(f, bench)]:
        order[(f, bench)].append(config)

names = {"mpich": "MPICH", "openmpi": "Open MPI"}
print()
print("| MPI | benchmark | configuration | median over %s jobs | [min, max] | vs none | vs none, per round | per round, quartiles |" % jobs)
print("|---|---|---|---:|---|---:|---:|---|")
for f in ("mpich", "openmpi"):
    for bench, unit, fmt in (("pingpong", "µs one-way", "%.3f"), ("msgrate", "M msgs/s", "%.2f"),
                             ("selfrate", "M msgs/s, 1 rank", "%.2f")):
        configs = order.get((f, bench))
        if not configs:
            continue
        scale = 1.0 if bench == "pingpong" else 1e-6
        base = statistics.median(data[(f, bench, "none")])
        for c in sorted(configs, key=lambda c: (c != "none", configs.index(c))):
            xs = data[(f, bench, c)]
            m = statistics.median(xs)
            ratio = m / base if base else float("nan")
            # Each round runs every configuration once, back to back: the
            # ratio to the same round's "none" job is immune to the
            # machine changing modes between rounds.
            per_round = [by_round[(f, bench, c, r)] / by_round[(f, bench, "none", r)]
                         for (ff, bb, cc, r) in by_round
                         if (ff, bb, cc) == (f, bench, c) and by_round.get((f, bench, "none", r))]
            pr = statistics.median(per_round) if per_round else float("nan")
            # The spread of the per-round ratios: their quartiles.
            q = statistics.quantiles(per_round, n=4) if len(per_round) > 1 else [pr, pr, pr]
            print("| %s | %s (%s) | %s | %s | [%s, %s] | %.3f | %.3f | [%.3f, %.3f] |" % (
                names[f], bench, unit, c, fmt % (m * scale),
                fmt % (min(xs) * scale), fmt % (max(xs) * scale), ratio, pr, q[0], q[2]))
# The VM has two modes (shared-memory latency about 0.1 or 0.36-0.55 us)
# and may change between them during a run: then one configuration's jobs
# differ several-fold and its median mixes the modes.
mixed = ["%s %s %s (%.3g to %.3g)" % (names[f], bench, c, min(xs), max(xs))
         for (f, bench, c), xs in sorted(data.items()) if min(xs) > 0 and max(xs) / min(xs) > 2]
if mixed:
    print()
    print("WARNING: the machine changed modes during this run; jobs of one configuration differ "
          "more than 2x, so their medians (and 'vs none') mix the modes; 'vs none, per round' "
          "compares jobs of the same round and still holds unless the mode changed within rounds:")
    for m in mixed:
        print("  " + m)
print()
print("vs none: ratio of the medians; per round: median over rounds of the ratio to that round's "
      "'none' job, and the quartiles of those ratios. Latency: above 1 = slower; message rate: "
      "below 1 = fewer messages/s.")
print("%s CPUs; load average before %s, after %s (2 busy-polling ranks need 2 idle CPUs)." % (
    sys.argv[3], sys.argv[4], sys.argv[5]))
EOF
