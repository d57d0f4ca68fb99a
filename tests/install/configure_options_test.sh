#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# CPREPLAY_TESTS: OFF, or AUTO without GoogleTest, configure the tool alone and say so; ON without
# GoogleTest and a value that is not AUTO/ON/OFF stop the configure with one line.
#
# usage: configure_options_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
source=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"

n=0
configure() {  # a fresh build directory each time; output in $work/out$n
  n=$((n + 1))
  cmake -S "$source" -B "$work/b$n" "$@" > "$work/out$n" 2>&1
}
expect_line() {  # expect_line WHAT LINE
  grep -qxF -- "$2" "$work/out$n" || { cat "$work/out$n"; fail "$1: expected the line [$2]"; }
}
tool_only() {  # tool_only WHAT: the cpreplay target, no test targets, no tests registered
  local targets
  targets=$(cmake --build "$work/b$n" --target help)
  grep -qx '\.\.\. cpreplay' <<< "$targets" || fail "$1: no cpreplay target"
  ! grep -qE '^\.\.\. (unit_tests|cpreplay-mktrace|cli_test)$' <<< "$targets" ||
    fail "$1: test targets configured"
  [ ! -e "$work/b$n/tests" ] || fail "$1: the tests directory was configured"
}

configure -DCPREPLAY_TESTS=OFF || { cat "$work/out$n"; fail "CPREPLAY_TESTS=OFF"; }
expect_line "CPREPLAY_TESTS=OFF" \
  "-- cpreplay: CPREPLAY_TESTS=OFF: building the cpreplay tool only, without the tests"
tool_only "CPREPLAY_TESTS=OFF"

# GoogleTest absent (hidden from find_package), CPREPLAY_TESTS left at AUTO.
configure -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON || { cat "$work/out$n"; fail "AUTO without GTest"; }
expect_line "AUTO without GoogleTest" \
  "-- cpreplay: GoogleTest not found: building the cpreplay tool only, without the tests (install GoogleTest or pass -DCPREPLAY_TESTS=ON to require them)"
tool_only "AUTO without GoogleTest"

configure -DCPREPLAY_TESTS=ON -DCMAKE_DISABLE_FIND_PACKAGE_GTest=ON &&
  fail "CPREPLAY_TESTS=ON configured without GoogleTest"
expect_line "ON without GoogleTest" \
  "   CPREPLAY_TESTS=ON needs GoogleTest, which was not found: install it (Debian: libgtest-dev), point CMAKE_PREFIX_PATH at it, or pass -DCPREPLAY_TESTS=OFF to build the tool only"

configure -DCPREPLAY_TESTS=maybe && fail "CPREPLAY_TESTS=maybe was accepted"
expect_line "CPREPLAY_TESTS=maybe" "   CPREPLAY_TESTS=maybe: expected AUTO, ON or OFF"
echo "CPREPLAY_TESTS options OK ($n configures)"
