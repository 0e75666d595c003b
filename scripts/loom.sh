#!/usr/bin/env bash
# Model-checks the engine's concurrent protocols with loom: the models in
# loom-tests/ (a separate crate) drive the engine's own code built with
# `--cfg loom`, where its atomics, mutexes, cells and thread-locals are
# loom's (see src/sync/mod.rs).
#
#   scripts/loom.sh                      # every model, preemption bound 3
#   LOOM_MAX_PREEMPTIONS=2 scripts/loom.sh watermark   # a faster, filtered run
#
# Builds in target/loom so that the `--cfg loom` build never invalidates the
# normal one. Models run one at a time: some engine state outside loom's
# model (the live-thread count) is process-wide. About 2–3 minutes of
# model checking on 2 cores at bound 3 (plus the first build), under 30 s
# at bound 2.
set -euo pipefail
cd "$(dirname "$0")/.."

export LOOM_MAX_PREEMPTIONS="${LOOM_MAX_PREEMPTIONS:-3}"
export RUSTFLAGS="--cfg loom"
export CARGO_TARGET_DIR="$PWD/target/loom"

echo "loom models, LOOM_MAX_PREEMPTIONS=$LOOM_MAX_PREEMPTIONS"
# --locked: loom-tests/Cargo.lock is committed and must match (a run never
# rewrites it); after a dependency change in the engine, refresh it with
# `cargo update --manifest-path loom-tests/Cargo.toml -w` and commit it.
cargo test --manifest-path loom-tests/Cargo.toml --release --locked -- --test-threads=1 "$@"
