#!/usr/bin/env bash
# The real consumer (issue 30): Debian's Prometheus scrapes `pvar serve`
# on 127.0.0.1 and its HTTP API must show every family with the right
# type, unit and value, a stopped process down within 10 s; `promtool
# check metrics` must pass the classic format (cli/tests/prometheus.rs).
#
#   scripts/prometheus-tests.sh
#
# 1. If `prometheus` or `promtool` is missing and we are root (with
#    apt-get), installs Debian's `prometheus` package; missing and not
#    root: a loud SKIPPED and exit 0, unless CI or PVAR_REQUIRE_PROMETHEUS=1
#    is set (then exit 1).
# 2. cargo test -p pvar-cli --test prometheus with
#    PVAR_REQUIRE_PROMETHEUS=1: a missing tool is then a failure.
#
# Bounded: the install 15 min at most, the test 10 min (it takes seconds
# once built; Prometheus runs on a free port with temporary storage).

set -euo pipefail
cd "$(dirname "$0")/.."

strict=0
if [[ -n "${CI:-}" || "${PVAR_REQUIRE_PROMETHEUS:-}" == 1 ]]; then
    strict=1
fi
have() { command -v "$1" >/dev/null 2>&1; }
limit() { timeout --kill-after=10 "$@"; }

if ! have prometheus || ! have promtool; then
    if [[ $(id -u) == 0 ]] && have apt-get; then
        echo "installing Debian's prometheus (prometheus, promtool)"
        export DEBIAN_FRONTEND=noninteractive
        limit 600 apt-get update -qq
        limit 900 apt-get install -y -qq --no-install-recommends prometheus >/dev/null
    elif ((strict)); then
        echo "prometheus-tests: FAILED: prometheus not installed and not root (CI / PVAR_REQUIRE_PROMETHEUS=1 is set)" >&2
        exit 1
    else
        printf '\n*** SKIPPED: prometheus-tests: prometheus not installed and not root: apt-get install prometheus ***\n\n' >&2
        exit 0
    fi
fi
prometheus --version 2>&1 | head -1

PVAR_REQUIRE_PROMETHEUS=1 limit 600 cargo test -p pvar-cli --test prometheus -- --nocapture
