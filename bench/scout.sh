#!/usr/bin/env bash
# Side by side with Scalasca 2.6's scout (issue 20's budget): the same trace, alternating runs of
# scout.mpi (default analysis: critical path and root causes on) and of cpreplay with every
# default on and with --no-what-if (scout's set of analyses), whole mpirun wall time and peak
# memory per process. Scout is not a Debian package: point SCOUT at a scout.mpi built elsewhere
# (bench/RESULTS.md, "Side by side with scout", says how it was built here); without it the
# script says so and exits 0. Scout writes scout.cubex and trace.stat next to the trace, so the
# trace is copied to a scratch directory first (never run it on ../shared).
#
# usage: SCOUT=/path/to/scout.mpi bench/scout.sh [--trace ANCHOR] [--build DIR] [--repeat K]
#   default trace: simtrace.py stencil --ranks 4 --iters 50000 --seed 11 (issue 5's reference
#   trace, 5.68 M events), made once into /tmp/cpreplay-bench/.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
trace="" build="$here/build" repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --trace) trace=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    *) echo "usage: SCOUT=... bench/scout.sh [--trace ANCHOR] [--build DIR] [--repeat K]" >&2; exit 2 ;;
  esac
done
if [ -z "${SCOUT:-}" ] || [ ! -x "$SCOUT" ]; then
  echo "bench/scout.sh: skipped: set SCOUT to a scout.mpi binary (Scalasca 2.6) to compare" >&2
  exit 0
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay"
[ -x "$cpreplay" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }
if [ -z "$trace" ]; then
  dir=/tmp/cpreplay-bench/stencil-r4-i50000
  [ -f "$dir/traces.otf2" ] || /usr/bin/python3 "$here/../shared/tools/simtrace.py" stencil "$dir" \
    --ranks 4 --iters 50000 --seed 11 >&2
  trace="$dir/traces.otf2"
fi
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
cp -r "$(dirname "$trace")"/. "$scratch/"
copy="$scratch/$(basename "$trace")"
np=$("$cpreplay" --count-ranks "$copy")
run="mpirun --oversubscribe --bind-to core:overload-allowed -np $np"
now() { date +%s.%N; }
echo "bench/scout.sh: $(date -u +%F), load $(cut -d' ' -f1-3 /proc/loadavg), $np processes, $repeat alternating runs"
for _ in $(seq "$repeat"); do
  s=$(now); out=$($run "$SCOUT" "$copy" 2>&1); e=$(now)
  scout_mem=$(echo "$out" | sed -n 's/.*Max. memory usage *: *\([0-9.]*\)MB.*/\1/p')
  scout_wall=$(echo "$e - $s" | bc)
  printf 'scout              wall %6.2f s   peak %6s MB\n' "$scout_wall" "$scout_mem"
  # For comparison only: scout with the transport cpreplay picks on one node (Open MPI's
  # shared-memory pml ob1, tools/mpi_startup.hpp); the ratios below are to the default run.
  s=$(now); $run --mca pml ob1 "$SCOUT" "$copy" >/dev/null 2>&1; e=$(now)
  printf 'scout (pml ob1)    wall %6.2f s\n' "$(echo "$e - $s" | bc)"
  for opts in "" "--no-what-if"; do
    s=$(now); out=$($run "$cpreplay" -v $opts -o "$scratch/r.cubex" "$copy" 2>&1); e=$(now)
    mem=$(echo "$out" | sed -n 's/.*peak memory per process \([0-9.]*\) MB (max).*/\1/p')
    wall=$(echo "$e - $s" | bc)
    # The ratios to the scout run just before (issue 20's budget: wall <= 0.10 x, memory <= 0.40 x).
    printf 'cpreplay %-12s wall %6.2f s   peak %6s MB   (%.3f x wall, %.3f x memory)\n' \
      "${opts:-defaults}" "$wall" "$mem" "$(echo "$wall / $scout_wall" | bc -l)" \
      "$(echo "${mem:-0} / ${scout_mem:-1}" | bc -l)"
  done
done
