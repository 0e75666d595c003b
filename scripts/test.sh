#!/usr/bin/env bash
# The whole test suite: what the README's test command and CI run.
#
#   ./scripts/test.sh            # the suite
#   ./scripts/test.sh --plan     # only say what it would install, and where
#
# It first says what it will install and where, then installs only that:
#
# - tools built with cargo (cargo-c, for docs/c-interface.md's install
#   recipe) into target/tools/bin, and Python packages (the OpenMetrics
#   parser the export tests check against) into target/tools/python: both
#   project-local, kept across runs, never in ~/.cargo/bin or the user's
#   Python;
# - system packages (MPI libraries, libclang for rsmpi, pkg-config) with
#   apt-get, only when run as root (CI); otherwise the stages that need
#   them say SKIPPED (and fail under CI=1);
# - rustfmt and clippy into the active toolchain if missing, and the
#   toolchain of `rust-version` only if it is not the active one.
#
# Each stage prints a header; the script stops at the first failure and
# always ends with the time each stage took. It leaves the working tree as
# it found it (everything it writes is under target/).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
plan_only=0
case ${1:-} in
--plan) plan_only=1 ;;
"") ;;
*)
    echo "usage: scripts/test.sh [--plan]" >&2
    exit 2
    ;;
esac

# ---------------------------------------------------------------- timing

stage_names=()
stage_secs=()
current=""
current_start=$SECONDS
suite_start=$SECONDS

end_stage() {
    if [[ -n $current ]]; then
        stage_names+=("$current")
        stage_secs+=($((SECONDS - current_start)))
        current=""
    fi
}

stage() {
    end_stage
    current="$*"
    current_start=$SECONDS
    printf '\n==> %s\n' "$*"
}

mmss() { printf '%d:%02d' $(($1 / 60)) $(($1 % 60)); }

summary() {
    local rc=$? failed=$current
    end_stage
    # A suite that ends before the C stage (a failure) leaves no cargo-c
    # build running behind it.
    if [[ -n ${cargo_c_pid:-} ]] && kill -0 "$cargo_c_pid" 2>/dev/null; then
        pkill -TERM -P "$cargo_c_pid" 2>/dev/null || true
        kill "$cargo_c_pid" 2>/dev/null || true
        printf '
stopped the background cargo-c build (the suite ended before the C stage)
'
    fi
    printf '\n==> stage times (wall clock)\n'
    local i
    for i in "${!stage_names[@]}"; do
        printf '  %7s  %s\n' "$(mmss "${stage_secs[$i]}")" "${stage_names[$i]}"
    done
    printf '  %7s  total\n' "$(mmss $((SECONDS - suite_start)))"
    if ((rc != 0)); then
        printf '\ntest suite FAILED (exit %d) in: %s\n' "$rc" "${failed:-setup}"
    else
        printf '\ntest suite passed\n'
    fi
}
((plan_only)) || trap summary EXIT

have() { command -v "$1" >/dev/null 2>&1; }

# ------------------------------------------- what will be installed, where

tools=$root/target/tools
cargo_c_version=0.10.24 # the newest cargo-c for Rust 1.95 (0.10.25 needs 1.96)
python_packages=(prometheus_client==0.26.0)
# System packages the stages need (Debian names). A stage that needs
# another adds it here, so that the plan below names it.
apt_packages=(pkg-config mpich libmpich-dev openmpi-bin libopenmpi-dev libclang-dev)

is_root=0
[[ $(id -u) == 0 ]] && is_root=1

# Project-local tools come first on the paths.
export PATH="$tools/bin:$PATH"
export PYTHONPATH="$tools/python${PYTHONPATH:+:$PYTHONPATH}"

# A full run writes about 6 GiB under target/ (the workspace, the MPI
# interposer built twice, loom, the cargo-c build while it runs). On a
# full disk the linker dies with SIGBUS while writing its output, which
# names nothing: say what is wrong up front.
need_gib=8
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
free_gib=$((free_kib / 1024 / 1024))

# What is missing.
cargo_c_ok=0
if have cargo-cinstall && [[ $(command -v cargo-cinstall) == "$tools/bin/cargo-cinstall" ]] &&
    cargo-cinstall --version 2>/dev/null | grep -q "$cargo_c_version"; then
    cargo_c_ok=1
fi
python_ok=0
python3 -c "import prometheus_client" 2>/dev/null && python_ok=1
apt_missing=()
have_libclang() {
    compgen -G '/usr/lib/llvm-*/lib/libclang.so*' >/dev/null ||
        compgen -G '/usr/lib/x86_64-linux-gnu/libclang-[0-9]*.so*' >/dev/null
}
for p in "${apt_packages[@]}"; do
    case $p in
    pkg-config) have pkg-config || apt_missing+=("$p") ;;
    mpich) have mpicc.mpich && have mpiexec.mpich || apt_missing+=("$p") ;;
    libmpich-dev) have mpicc.mpich || apt_missing+=("$p") ;;
    openmpi-bin) have mpiexec.openmpi || apt_missing+=("$p") ;;
    libopenmpi-dev) have mpicc.openmpi || apt_missing+=("$p") ;;
    libclang-dev) have_libclang || apt_missing+=("$p") ;;
    *) dpkg -s "$p" >/dev/null 2>&1 || apt_missing+=("$p") ;;
    esac
done
components_missing=()
cargo fmt --version >/dev/null 2>&1 || components_missing+=(rustfmt)
cargo clippy --version >/dev/null 2>&1 || components_missing+=(clippy)
active=$(rustc --version | awk '{ print $2 }')
msrv=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
msrv_toolchain=$msrv
[[ $msrv_toolchain =~ ^[0-9]+\.[0-9]+$ ]] && msrv_toolchain="$msrv_toolchain.0"
msrv_separate=0
[[ $msrv_toolchain != "$active" ]] && msrv_separate=1

printf 'pvar test suite in %s\n' "$root"
printf 'disk: %s GiB free (a full run needs about %s)\n' "$free_gib" "$need_gib"
printf 'installs, and where:\n'
if ((cargo_c_ok)); then
    printf '  cargo-c %s: present in target/tools/bin\n' "$cargo_c_version"
else
    printf '  cargo-c %s: to build with `cargo install --locked --root target/tools` (once; kept in\n' "$cargo_c_version"
    printf '    target/tools/bin; about 22 CPU-minutes: some 12 minutes of a quiet 2-core machine, in the\n'
    printf '    background while the other stages run)\n'
fi
if ((python_ok)); then
    printf '  Python prometheus_client: present (%s)\n' "$(python3 -c 'import prometheus_client, os; print(os.path.dirname(prometheus_client.__file__))')"
else
    printf '  Python %s: to install with pip into target/tools/python\n' "${python_packages[*]}"
fi
if ((${#components_missing[@]})); then
    printf '  rustup components %s: to add to the active toolchain (%s)\n' "${components_missing[*]}" "$active"
fi
if ((msrv_separate)); then
    printf '  Rust %s (rust-version): to install with rustup if missing (rustup'"'"'s toolchains directory)\n' "$msrv_toolchain"
else
    printf '  Rust %s (rust-version) is the active toolchain: its check is the build itself\n' "$msrv"
fi
if ((${#apt_missing[@]} == 0)); then
    printf '  system packages (%s): present\n' "${apt_packages[*]}"
elif ((is_root)) && have apt-get; then
    printf '  system packages, with apt-get (root): %s\n' "${apt_missing[*]}"
else
    printf '  system packages missing and not root (no install): %s\n' "${apt_missing[*]}"
    printf '    the stages that need them are SKIPPED (they fail under CI=1); as root: apt-get install %s\n' "${apt_missing[*]}"
fi
printf 'nothing is installed into ~/.cargo/bin or the user'"'"'s Python; the working tree is left as found\n'

((plan_only)) && exit 0

# The working tree as found (compared at the end).
tree_before=""
in_git=0
if have git && git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
    in_git=1
    tree_before=$(git status --porcelain --untracked-files=normal)
fi

if ((free_gib < need_gib)); then
    echo "not enough disk space: $free_gib GiB free, the suite needs $need_gib GiB" >&2
    exit 1
fi

# ---------------------------------------------------------------- installs

stage "installs (as listed above)"
if ((${#apt_missing[@]})) && ((is_root)) && have apt-get; then
    export DEBIAN_FRONTEND=noninteractive
    timeout 600 apt-get update -qq
    timeout 900 apt-get install -y -qq "${apt_missing[@]}" >/dev/null
    echo "apt-get installed: ${apt_missing[*]}"
fi
if ((${#components_missing[@]})); then
    rustup component add "${components_missing[@]}"
fi
if ((!python_ok)); then
    mkdir -p "$tools/python"
    python3 -m pip install --quiet --disable-pip-version-check --root-user-action=ignore \
        --target "$tools/python" "${python_packages[@]}"
    echo "pip installed ${python_packages[*]} into target/tools/python"
fi
# Installed: the tests that parse OpenMetrics text must not skip.
export PVAR_REQUIRE_PYTHON=1
# The attack tests (cli/tests/attacks.rs) need a second OS user, which
# only root can create: required as root (CI runs as root).
if [[ $(id -u) == 0 || -n "${CI:-}" ]]; then
    export PVAR_REQUIRE_ATTACKER=1
else
    printf '\n*** not root: the attack tests that need a second OS user will be SKIPPED ***\n\n' >&2
fi

# cargo-c builds in the background (its ~400 crates use the cores the
# test stages leave idle); the C stage waits for it.
cargo_c_pid=""
cargo_c_log=$tools/cargo-c-install.log
if ((!cargo_c_ok)); then
    mkdir -p "$tools"
    echo "building cargo-c $cargo_c_version in the background (log: target/tools/cargo-c-install.log)"
    (
        start=$SECONDS
        nice -n 10 cargo install --locked --root "$tools" cargo-c --version "$cargo_c_version" \
            >"$cargo_c_log" 2>&1
        echo "cargo-c built in $((SECONDS - start)) s" >>"$cargo_c_log"
    ) &
    cargo_c_pid=$!
fi

# ------------------------------------------------------------------ stages

stage "test dependencies: script(1), the pseudo-terminal of the CLI's terminal tests"
if ! script --version >/dev/null 2>&1; then
    echo "script(1) is missing: install util-linux (Debian: bsdutils), which the" >&2
    echo "terminal tests of the pvar command need (cli/tests, tests/support/script_tty.rs)" >&2
    exit 1
fi
# Present: the terminal tests must not skip.
export PVAR_REQUIRE_SCRIPT=1

stage "format check"
cargo fmt --all -- --check

stage "clippy (the workspace and every target, with the metrics feature; the library alone)"
cargo clippy --workspace --all-targets --features pvar/metrics -- -D warnings
# The library as a Rust dependent builds it: no C interface, no feature.
cargo clippy -p pvar --lib -- -D warnings

if ((msrv_separate)); then
    stage "rust-version: the workspace builds with Rust $msrv_toolchain"
    if ! rustup run "$msrv_toolchain" rustc --version >/dev/null 2>&1; then
        rustup toolchain install "$msrv_toolchain" --profile minimal
    fi
    cargo "+$msrv_toolchain" check --workspace --all-targets
fi

# The build the test stage makes; the C and MPI stages build their
# libraries and the `pvar` binary with the same selection and features, so
# they reuse it instead of building the engine again.
export PVAR_TEST_BUILD="--workspace --features pvar/metrics"

stage "unit, integration and doc tests (with the metrics feature), benches run once as tests"
# --all-targets builds the benches and runs each once in test mode (what
# `cargo bench --no-run` would check, and more); the metrics recorder's
# tests and doc tests run here with the feature on.
cargo test --workspace --all-targets --features pvar/metrics --no-fail-fast
cargo test --workspace --doc --features pvar/metrics
# (The MPI interposer's Rust half is a workspace member: its unit tests —
# the merged MPI_T against a fake library, the report's C entry points —
# ran above; its job tests need MPI and run in the MPI stage below.)

stage "documentation builds without warnings (what docs.rs shows)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p pvar --features metrics

stage "zero-cost build (--cfg pvar_compile_out) and its tests pass"
# (a cfg, not a feature; its own target dir, as a RUSTFLAGS change rebuilds
# everything)
RUSTFLAGS="--cfg pvar_compile_out" CARGO_TARGET_DIR=target/compile-out \
    cargo test --test compile_out

stage "package: what crates.io would get"
scripts/package-check.sh

stage "MPI jobs: the interposer, one MPI_T, the cross-rank report (MPICH and Open MPI)"
./scripts/mpi-tests.sh

stage "the report's HTML page in a real browser (headless Chromium)"
./scripts/browser-tests.sh

stage "Prometheus: a real server scrapes pvar serve; promtool checks the classic format"
./scripts/prometheus-tests.sh

stage "loom models"
./scripts/loom.sh

stage "C interface (waits for the cargo-c build if it still runs)"
if [[ -n $cargo_c_pid ]]; then
    waited=$SECONDS
    if ! wait "$cargo_c_pid"; then
        tail -n 40 "$cargo_c_log" >&2
        echo "building cargo-c failed (log: $cargo_c_log)" >&2
        exit 1
    fi
    echo "waited $((SECONDS - waited)) s for cargo-c; $(tail -n 1 "$cargo_c_log")"
fi
./scripts/c-tests.sh

stage "the working tree is as the suite found it"
if ((in_git)); then
    tree_after=$(git status --porcelain --untracked-files=normal)
    if [[ $tree_after != "$tree_before" ]]; then
        echo "the suite changed the working tree (git status before, then after):" >&2
        echo "${tree_before:-(clean)}" >&2
        echo "---" >&2
        echo "${tree_after:-(clean)}" >&2
        exit 1
    fi
    if [[ -z $tree_after ]]; then
        echo "git status: clean"
    else
        echo "git status: as before the suite ($(echo "$tree_after" | wc -l) entries)"
    fi
fi
