#!/usr/bin/env bash
# Builds everything with AddressSanitizer and UndefinedBehaviorSanitizer into ./build-sanitize
# and runs the unit, MPI and end-to-end tests there (README, "Sanitizer build"); any sanitizer
# report fails its test. With clang the build also has the libFuzzer targets, and their smoke
# runs (60 s per target) are run too; without clang it is a g++ build and they are left out.
# usage: test-sanitized.sh [--all]
#   --all: the whole suite sanitized (conformance, install and view tests too), on demand.
set -euo pipefail
cd "$(dirname "$0")/.."
labels='^(unit|mpi|e2e|fuzz)$'
case "${1:-}" in
  "") ;;
  --all) labels='' ;;
  *) echo "usage: test-sanitized.sh [--all]" >&2; exit 2 ;;
esac
config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPREPLAY_TESTS=ON -DCPREPLAY_SANITIZE=ON)
if command -v ccache > /dev/null; then
  config+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
if command -v clang++ > /dev/null && command -v clang > /dev/null; then
  config+=(-DCMAKE_CXX_COMPILER=clang++ -DCMAKE_C_COMPILER=clang -DCPREPLAY_FUZZ=ON)
else
  echo "test-sanitized.sh: no clang++: the fuzz targets and their smoke tests are not built" \
       "(bash scripts/install-deps.sh installs clang)"
fi
log=build-sanitize.log
cmake -S . -B build-sanitize "${config[@]}" > "$log" 2>&1 || { cat "$log"; exit 1; }
cmake --build build-sanitize -j 2 >> "$log" 2>&1 || { tail -n 60 "$log"; exit 1; }
cd build-sanitize
# A report stops the process with a non-zero status (UBSan: -fno-sanitize-recover). Leaks are
# reported too; tests/sanitize/lsan.supp names what Open MPI and OTF2 keep until exit, which
# LeakSanitizer only attributes with the slow unwinder (Open MPI's plugins have no frame
# pointers). mpirun passes the variables on to the processes it starts.
# WORKAROUND for the sanitizer runtimes of LLVM <= 16 and GCC <= 13 with glibc >= 2.25
# (google/sanitizers#1322): their __tls_get_addr interceptor takes a dynamic TLS block of an
# Open MPI plugin whose address happens to be 16 bytes into a page for a glibc 2.19 one, reads a
# bogus range from before it, and LeakSanitizer's tracer dies scanning it at exit ("Tracer
# caught signal 11": 11 of the 13 conformance.*.window3 tests, sanitized). Without the
# interceptor that TLS is not scanned, which can only add leak reports, and those would be in
# Open MPI (lsan.supp).
export ASAN_OPTIONS=detect_leaks=1:fast_unwind_on_malloc=0:halt_on_error=1:abort_on_error=0
ASAN_OPTIONS+=:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$PWD/../tests/sanitize/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1
ctest --output-on-failure -j 2 --timeout 1200 ${labels:+-L "$labels"}
