#!/usr/bin/env bash
# The whole test suite: what the README's test command and CI run.
# Each stage prints a header; the script stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

stage() { printf '\n==> %s\n' "$*"; }

# A full run writes about 5 GiB under target/ (the workspace, the MPI
# interposer built twice per MPI library, loom, fuzz). On a full disk the
# linker dies with SIGBUS while writing its output, which names nothing:
# say what is wrong up front.
need_gib=6
free_kib=$(df -Pk . | awk 'NR == 2 { print $4 }')
free_gib=$((free_kib / 1024 / 1024))
printf 'disk: %s GiB free under %s (a full run needs about 5)\n' "$free_gib" "$PWD"
if [ "$free_gib" -lt "$need_gib" ]; then
    echo "not enough disk space: $free_gib GiB free, the suite needs $need_gib GiB" >&2
    exit 1
fi

stage "test dependencies: the Python OpenMetrics parser the export tests check against"
if ! python3 -c "import prometheus_client" 2>/dev/null; then
    python3 -m pip install --quiet --disable-pip-version-check prometheus_client
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

stage "clippy (the workspace, all targets, warnings are errors)"
cargo clippy --workspace --all-targets -- -D warnings
# The library as a Rust dependent builds it: without the C interface.
cargo clippy -p pvar --lib -- -D warnings
# With the `metrics` crate recorder (an optional feature).
cargo clippy -p pvar --all-targets --features metrics -- -D warnings

stage "rust-version: the workspace builds with the oldest toolchain it claims"
msrv=$(sed -n 's/^rust-version *= *"\(.*\)"/\1/p' Cargo.toml | head -n1)
toolchain=$msrv
[[ "$toolchain" =~ ^[0-9]+\.[0-9]+$ ]] && toolchain="$toolchain.0"
if ! rustup run "$toolchain" rustc --version >/dev/null 2>&1; then
    rustup toolchain install "$toolchain" --profile minimal
fi
cargo "+$toolchain" check --workspace --all-targets

stage "unit, integration and doc tests"
cargo test --workspace --all-targets
cargo test --workspace --doc
# (The MPI interposer's Rust half is a workspace member: its unit tests —
# the merged MPI_T against a fake library, the report's C entry points —
# ran above; its job tests need MPI and run in the MPI stage below.)

stage "the metrics recorder feature: its tests and doc tests"
cargo test --features metrics --test metrics_recorder
cargo test --features metrics --lib recorder
cargo test --features metrics --doc recorder

stage "documentation builds without warnings (what docs.rs shows)"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps -p pvar --features metrics

stage "zero-cost feature builds and its tests pass"
# (a cfg, not a feature; its own target dir, as a RUSTFLAGS change rebuilds
# everything)
RUSTFLAGS="--cfg pvar_compile_out" CARGO_TARGET_DIR=target/compile-out \
    cargo test --test compile_out

stage "benches compile"
cargo bench --workspace --no-run

stage "package: what crates.io would get"
scripts/package-check.sh

stage "C interface"
./scripts/c-tests.sh

stage "MPI jobs: the interposer, one MPI_T, the cross-rank report (MPICH and Open MPI)"
./scripts/mpi-tests.sh

stage "the report's HTML page in a real browser (headless Chromium)"
./scripts/browser-tests.sh

stage "Prometheus: a real server scrapes pvar serve; promtool checks the classic format"
./scripts/prometheus-tests.sh

stage "loom models"
./scripts/loom.sh
