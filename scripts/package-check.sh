#!/usr/bin/env bash
# Checks the `pvar` crate as it would be published: its file list holds
# sources, docs, headers and licences and no build product, and
# `cargo publish --dry-run` (which builds the packaged crate on its own)
# passes. Run by scripts/test.sh.
set -euo pipefail
cd "$(dirname "$0")/.."

list=$(cargo package -p pvar --list --allow-dirty 2>/dev/null)
echo "$list" | sed 's/^/  /'
bad=$(echo "$list" | grep -E '(^|/)target/|\.(so|a|o|rlib|rmeta|d)$|^(cli|capi|fuzz|loom-tests|tests|benches|scripts)/' || true)
if [ -n "$bad" ]; then
    echo "package-check: files that do not belong in the crate:" >&2
    echo "$bad" >&2
    exit 1
fi
for f in Cargo.toml src/lib.rs README.md LICENSE-MIT LICENSE-APACHE CHANGELOG.md include/mpi_t.h \
    include/pvar.h docs/component-guide.md; do
    if ! echo "$list" | grep -qx "$f"; then
        echo "package-check: $f is missing from the crate" >&2
        exit 1
    fi
done
# `cargo publish` checks the lock file against the registry: a yanked
# version is a warning there, an error here.
out=$(mktemp)
trap 'rm -f "$out"' EXIT
cargo publish -p pvar --dry-run --allow-dirty 2>&1 | tee "$out"
if grep -q 'is yanked' "$out"; then
    echo "package-check: Cargo.lock holds a yanked version (cargo update -p NAME)" >&2
    exit 1
fi
