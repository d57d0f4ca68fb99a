#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs the libFuzzer harness: tests/fuzz/run.sh BUILD_DIR {evt|defs} SECONDS [WORK_DIR]
# WORK_DIR (default /tmp/cpreplay-fuzz) keeps the corpus and any crash-/leak-/oom- artifacts.
set -euo pipefail
build=$1 target=$2 seconds=$3 work=${4:-/tmp/cpreplay-fuzz}
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$work/$target" "$work/artifacts"
export CPREPLAY_FUZZ_TARGET=$target
# OTF2 allocates count x size for array records before checking the count against the data; a
# corrupted count asks for up to 32 GiB. Let ASan refuse such requests (OTF2 then reports
# MEM_ALLOC_FAILED) instead of poisoning gigabytes of shadow memory.
export ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=512
export LSAN_OPTIONS=suppressions=$here/lsan.supp
export UBSAN_OPTIONS=print_stacktrace=1
# The harness runs the one-rank analysis with MPI (singleton, no mpirun).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMPI_MCA_btl=self
# The good file is the seed of the corpus.
(cd "$work" && CPREPLAY_FUZZ_SEED_OUT="$work/$target/seed" "$build/fuzz_evt_decoder" -runs=0 \
  >/dev/null 2>&1)
exec "$build/fuzz_evt_decoder" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
  -max_len=4096 -print_final_stats=1 -artifact_prefix="$work/artifacts/" "$work/$target"
