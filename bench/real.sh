#!/usr/bin/env bash
# Real applications beside the synthetic reference (issue 32): for each trace, cpreplay's defaults
# against --no-what-if, and with SCOUT (and SCOUT_HYB for hybrid traces) set, against Scalasca
# 2.6's scout, each pair in alternating runs (farm-bench: A B A B ..., ratios taken pair by pair;
# medians quoted). Then memory per event: each trace's peak per process (cpreplay -v, the largest
# process) less an empty analysis process's (a 2-iteration stencil trace of the same ranks and
# threads), over the events of the largest process. Nothing here is asserted by the test suite.
#
# usage: [SCOUT=.../scout.mpi] [SCOUT_HYB=.../scout.hyb] bench/real.sh [--runs N] [--build DIR]
#          [--no-bind] [--trace ANCHOR ...]
#   Ranks that outnumber the cores are bound round-robin to them (--bind-to
#   core:overload-allowed), as bench/run.sh does, for cpreplay and scout alike (not for hybrid
#   traces, whose scout.hyb threads would share one core); --no-bind leaves placement to the
#   kernel (Open MPI's default), which spreads the wall times more.
#   default traces: the reference (simtrace.py stencil --ranks 4 --iters 50000 --seed 11, made once
#   into /tmp/cpreplay-bench/) and ../shared/real/{hpccg-4,hpccg-4u,lulesh-8x2}. Traces are copied
#   to a scratch directory (scout writes next to the trace). Needs farm-bench.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" runs=5 traces=() bind=1
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --trace) traces+=("$2"); shift 2 ;;
    --no-bind) bind=0; shift ;;
    *) echo "usage: bench/real.sh [--runs N] [--build DIR] [--no-bind] [--trace ANCHOR ...]" >&2
       exit 2 ;;
  esac
done
command -v farm-bench >/dev/null || { echo "bench/real.sh: needs farm-bench" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay"
[ -x "$cpreplay" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }
simtrace="$here/../shared/tools/simtrace.py"
if [ ${#traces[@]} = 0 ]; then
  ref=/tmp/cpreplay-bench/stencil-r4-i50000
  [ -f "$ref/traces.otf2" ] || /usr/bin/python3 "$simtrace" stencil "$ref" --ranks 4 --iters 50000 \
    --seed 11 >&2
  traces=("$ref/traces.otf2")
  for t in hpccg-4 hpccg-4u lulesh-8x2; do traces+=("$here/../shared/real/$t/traces.otf2"); done
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# median of farm-bench's line "$2" (e.g. "A wall s", "A/B wall") in file $1
med() { awk -v k="$2" 'index($0, k) == 1 { n = split(substr($0, length(k) + 1), f, " "); print f[2]; exit }' "$1"; }
# threads per rank of a trace: its locations over its ranks
threads_of() {
  local locs; locs=$(otf2-print -A "$1" 2>/dev/null | grep -c '^LOCATION ' || true)
  local ranks; ranks=$("$cpreplay" --count-ranks "$1")
  [ "${locs:-0}" -ge "$ranks" ] 2>/dev/null && echo $((locs / ranks)) || echo 1
}
# peak per process (MB) and events on the largest process, from a cpreplay -v run
peak_of() {  # np anchor -> "peak_mb events"
  local binding=()
  [ "$bind" = 1 ] && [ "$1" -gt "$(nproc)" ] && binding=(--bind-to core:overload-allowed)
  mpirun --oversubscribe "${binding[@]}" -np "$1" "$cpreplay" -v -o "$scratch/p.cubex" "$2" 2>&1 >/dev/null |
    sed -n 's/.*peak memory per process \([0-9.]*\) MB (max).*, \([0-9]*\) events on the largest.*/\1 \2/p'
}

echo "bench/real.sh: $(date -u '+%F %H:%M UTC'), load $(cut -d' ' -f1-3 /proc/loadavg), $runs alternating pairs per line (medians), ranks beyond $(nproc) cores $([ "$bind" = 1 ] && echo bound round-robin || echo unbound)"
printf '%-18s %9s %7s | %-22s %8s %8s %7s %7s\n' trace ev/proc threads "A vs B" "A wall" "B wall" "A/B" "A/B mem"
for anchor in "${traces[@]}"; do
  name=$(basename "$(dirname "$anchor")")
  dir="$scratch/$name"
  mkdir -p "$dir" && cp -r "$(dirname "$anchor")"/. "$dir/"
  copy="$dir/$(basename "$anchor")"
  np=$("$cpreplay" --count-ranks "$copy")
  th=$(threads_of "$copy")
  run="mpirun --oversubscribe -np $np"
  # (Not for hybrid traces: scout.hyb's OpenMP threads would share their rank's one core.)
  [ "$bind" = 1 ] && [ "$th" = 1 ] && [ "$np" -gt "$(nproc)" ] && run+=" --bind-to core:overload-allowed"
  read -r peak events <<<"$(peak_of "$np" "$copy")"
  line() {  # label file
    printf '%-18s %9s %7s | %-22s %8s %8s %7s %7s\n' "$name" "$events" "$th" "$1" \
      "$(med "$2" 'A wall s')" "$(med "$2" 'B wall s')" "$(med "$2" 'A/B wall')" \
      "$(awk -v a="$(med "$2" 'A peak MiB')" -v b="$(med "$2" 'B peak MiB')" 'BEGIN { printf "%.3f", a / b }')"
  }
  farm-bench -n "$runs" --timeout 1200 \
    --vs "$run $cpreplay -q --no-what-if -o $dir/b.cubex $copy" \
    -- $run "$cpreplay" -q -o "$dir/a.cubex" "$copy" >"$scratch/fb" 2>&1
  line "defaults/--no-what-if" "$scratch/fb"
  scout=${SCOUT:-}
  [ "$th" -gt 1 ] && scout=${SCOUT_HYB:-}
  if [ -n "$scout" ] && [ -x "$scout" ]; then
    OMP_NUM_THREADS=$th OMP_WAIT_POLICY=PASSIVE farm-bench -n "$runs" --timeout 1800 \
      --vs "$run $scout $copy" -- $run "$cpreplay" -q -o "$dir/a.cubex" "$copy" >"$scratch/fs" 2>&1
    line "defaults/$(basename "$scout")" "$scratch/fs"
  fi
  # An empty analysis process: a 2-iteration stencil trace of the same ranks (and threads).
  empty="$scratch/empty-$np-$th"
  if [ ! -f "$empty/traces.otf2" ]; then
    if [ "$th" -gt 1 ] && [ -x "$build/tests/cpreplay-mktrace" ]; then
      "$build/tests/cpreplay-mktrace" hybrid "$empty" --ranks "$np" --threads "$th" --iters 2 >/dev/null 2>&1
    else
      /usr/bin/python3 "$simtrace" stencil "$empty" --ranks "$np" --iters 2 --seed 1 >/dev/null 2>&1
    fi
  fi
  read -r epeak _ <<<"$(peak_of "$np" "$empty/traces.otf2")"
  awk -v n="$name" -v p="$peak" -v e="$epeak" -v ev="$events" 'BEGIN {
    printf "%-18s defaults: peak per process %.1f MB, empty %.1f MB: %.1f B per event above empty (%d events on the largest process)\n",
      n, p, e, (p - e) * 1e6 / ev, ev }'
done
