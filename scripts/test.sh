#!/usr/bin/env bash
# The whole test suite: what the README's test command and CI run.
# Each stage prints a header; the script stops at the first failure.
set -euo pipefail
cd "$(dirname "$0")/.."

stage() { printf '\n==> %s\n' "$*"; }

stage "format check"
cargo fmt --all -- --check

stage "clippy (all targets, warnings are errors)"
cargo clippy --all-targets -- -D warnings

stage "unit, integration and doc tests"
cargo test --all-targets
cargo test --doc

stage "zero-cost feature builds and its tests pass"
cargo test --features compile-out --test compile_out

stage "benches compile"
cargo bench --no-run

stage "C interface"
./scripts/c-tests.sh

stage "loom models"
./scripts/loom.sh
