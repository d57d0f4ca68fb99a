#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# `cmake --install --prefix` into a place that cannot be written fails with CMake's own error and
# a non-zero exit. (A prefix below a regular file: unwritable even for root.)
#
# usage: bad_prefix_test.sh BUILD_DIR WORK_DIR
set -euo pipefail
build=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
touch "$work/a-file"
set +e
cmake --install "$build" --prefix "$work/a-file/prefix" > "$work/out" 2>&1
rc=$?
set -e
[ "$rc" -ne 0 ] || { cat "$work/out"; fail "cmake --install into $work/a-file/prefix succeeded"; }
grep -q "^CMake Error at .*cmake_install.cmake:[0-9]* (file):" "$work/out" ||
  { cat "$work/out"; fail "no CMake error"; }
grep -qF "file cannot create directory:" "$work/out" && grep -qF "$work/a-file/prefix/bin" "$work/out" ||
  { cat "$work/out"; fail "CMake's error does not name the directory it could not create"; }
echo "unwritable prefix OK: exit $rc"
