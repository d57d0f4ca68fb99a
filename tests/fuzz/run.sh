#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a libFuzzer target: tests/fuzz/run.sh [--fresh] FUZZER {evt|defs|multi} SECONDS [WORK_DIR]
# FUZZER is the fuzz_trace binary of a CPREPLAY_FUZZ=ON build. The run starts from the good file,
# the committed regression inputs (regressions/TARGET) and the corpus in WORK_DIR/TARGET (default
# WORK_DIR: /tmp/cpreplay-fuzz), which keeps what it finds new; --fresh empties that corpus first.
# Findings go to WORK_DIR/artifacts-TARGET/. Exit status 0 only if nothing was found.
set -euo pipefail
fresh=0
if [ "${1:-}" = --fresh ]; then fresh=1; shift; fi
if [ $# -lt 3 ]; then
  echo "usage: run.sh [--fresh] FUZZER {evt|defs|multi} SECONDS [WORK_DIR]" >&2
  exit 2
fi
fuzzer=$1 target=$2 seconds=$3 work=${4:-/tmp/cpreplay-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
case "$target" in evt|defs|multi) ;; *) echo "run.sh: unknown target $target" >&2; exit 2 ;; esac
corpus=$work/$target seeds=$work/seed-$target artifacts=$work/artifacts-$target
if [ $fresh = 1 ]; then rm -rf "$corpus"; fi
rm -rf "$seeds" "$artifacts"
mkdir -p "$corpus" "$seeds" "$artifacts"
export CPREPLAY_FUZZ_TARGET=$target
# OTF2 allocates count x size for array records before checking the count against the data; a
# corrupted count asks for up to 32 GiB. Let ASan refuse such requests (OTF2 then reports
# MEM_ALLOC_FAILED) instead of poisoning gigabytes of shadow memory.
# intercept_tls_get_addr=0: see scripts/test-sanitized.sh (LeakSanitizer's tracer at exit).
export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=512:detect_leaks=1
ASAN_OPTIONS+=:intercept_tls_get_addr=0
export LSAN_OPTIONS=suppressions=$here/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# The harness runs the analysis with MPI (singleton, no mpirun).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self
# The good file is the seed; the target also checks that the good archive goes through the
# whole analysis with every option before it takes any input.
CPREPLAY_FUZZ_SEED_OUT="$seeds/good" "$fuzzer" -runs=0 "$seeds" > "$work/setup-$target.log" 2>&1 ||
  { cat "$work/setup-$target.log" >&2; echo "run.sh: $target: the target failed its set-up" >&2
    exit 1; }
max_len=$(( $(stat -c %s "$seeds/good") * 2 ))
[ "$max_len" -ge 4096 ] || max_len=4096
log=$work/fuzz-$target.log
dirs=("$corpus" "$seeds")
if [ -d "$here/regressions/$target" ]; then dirs+=("$here/regressions/$target"); fi
status=0
"$fuzzer" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len="$max_len" \
  -error_exitcode=1 -timeout_exitcode=1 -print_final_stats=1 -artifact_prefix="$artifacts/" \
  "${dirs[@]}" > "$log" 2>&1 || status=$?
grep -E "^(#[0-9]+.*(INITED|DONE|NEW|pulse)|stat::|Done|==[0-9]+==)" "$log" | tail -n 12 || true
found=$(find "$artifacts" -type f | wc -l)
runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
if [ "$status" -ne 0 ] || [ "$found" -ne 0 ]; then
  echo "run.sh: $target: FINDING (exit $status; artifacts in $artifacts; full log $log)" >&2
  exit 1
fi
if [ -z "$runs" ] || [ "$runs" -lt 1 ]; then
  echo "run.sh: $target: libFuzzer executed no input (log $log)" >&2
  exit 1
fi
echo "run.sh: $target: $runs inputs in ${seconds} s, nothing found"
