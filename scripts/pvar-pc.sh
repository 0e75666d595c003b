#!/usr/bin/env bash
# Generates pvar.pc from scripts/pvar.pc.in.
#
#   scripts/pvar-pc.sh PREFIX [LIBDIR] [INCLUDEDIR] > pvar.pc
#
# LIBDIR defaults to PREFIX/lib, INCLUDEDIR to PREFIX/include; the version
# comes from Cargo.toml. For an installed copy: copy target/release/libpvar.*
# to LIBDIR, include/*.h to INCLUDEDIR, and the output to LIBDIR/pkgconfig.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
prefix=${1:?usage: pvar-pc.sh PREFIX [LIBDIR] [INCLUDEDIR]}
libdir=${2:-$prefix/lib}
includedir=${3:-$prefix/include}
version=$(sed -n 's/^version *= *"\(.*\)"/\1/p' "$here/../Cargo.toml" | head -n1)
sed -e "s|@PREFIX@|$prefix|g" -e "s|@LIBDIR@|$libdir|g" \
    -e "s|@INCLUDEDIR@|$includedir|g" -e "s|@VERSION@|$version|g" \
    "$here/pvar.pc.in"
