#!/usr/bin/env bash
# Hybrid MPI+OpenMP against pure MPI (issue 17): the project's own trace writer makes a hybrid
# trace (4 ranks x 4 threads, parallel loop + halo exchange + MPI_Allreduce per iteration) and its
# pure-MPI twin (the same program with one thread, more iterations: about as many events), and
# both are analyzed in alternating runs. Prints events per second (load phase, and load to
# summary) and bytes per event (peak per process / events on the largest process; "above empty":
# less an empty analysis process's peak, issue 32). Nothing here is asserted by the test suite.
#
# usage: bench/hybrid.sh [--repeat K] [--build DIR] [--iters N (hybrid; default 4200 = 1.0 M events)]
#   Every stage runs (the critical path, the root causes and what-if run through the threads of
#   the hybrid trace), each trace once with --no-what-if and once with what-if and a scenario
#   (--what-if loop_body=0.5: the scenario's critical path too); the last column is the what-if
#   phase's time (process 0's progress line).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" repeat=3 iters=4200
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    *) echo "usage: bench/hybrid.sh [--repeat K] [--build DIR] [--iters N]" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay" mktrace="$build/tests/cpreplay-mktrace"
[ -x "$cpreplay" ] && [ -x "$mktrace" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }
dir=/tmp/cpreplay-bench
hyb="$dir/hybrid-r4t4-i$iters" mpi="$dir/hybrid-r4t1-i$((iters * 5))"
# Per iteration and rank: 60 events with 4 threads, 12 with one: 5 x the iterations.
[ -f "$hyb/traces.otf2" ] || "$mktrace" hybrid "$hyb" --ranks 4 --threads 4 --iters "$iters" >&2
[ -f "$mpi/traces.otf2" ] || "$mktrace" hybrid "$mpi" --ranks 4 --threads 1 --iters "$((iters * 5))" >&2
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# An empty analysis process of each kind (issue 32): the same program for 2 iterations; its peak
# per process is what a run holds before any event (MPI, definitions, the binary).
declare -A empty
for kind in hybrid mpi; do
  threads=4
  [ $kind = mpi ] && threads=1
  e="$dir/hybrid-r4t$threads-i2"
  [ -f "$e/traces.otf2" ] || "$mktrace" hybrid "$e" --ranks 4 --threads $threads --iters 2 >&2
  empty[$kind]=$(mpirun --oversubscribe --bind-to core:overload-allowed -np 4 "$cpreplay" -v \
    -o "$out/r.cubex" "$e/traces.otf2" 2>&1 >/dev/null |
    sed -n 's/.*peak memory per process \([0-9.]*\) MB (max).*/\1/p')
done

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A rows
for _ in $(seq "$repeat"); do
  for kind in hybrid mpi; do
    for wi in off on; do
      trace=$hyb
      [ $kind = mpi ] && trace=$mpi
      opts=(--no-what-if)
      [ $wi = on ] && opts=(--what-if loop_body=0.5)
      mpirun --oversubscribe --bind-to core:overload-allowed -np 4 "$cpreplay" -v \
        "${opts[@]}" -o "$out/r.cubex" "$trace/traces.otf2" >"$out/out" 2>"$out/err" ||
        { cat "$out/err" >&2; exit 1; }
      events=$(sed -n 's/^cpreplay: events *\.\.\. [0-9.]* s *\([0-9]*\) events.*/\1/p' "$out/err")
      loadt=$(sed -n 's/^cpreplay: events *\.\.\. \([0-9.]*\) s.*/\1/p' "$out/err")
      analysis=$(grep -o 'analysis [0-9.]* [mu]*s' "$out/out" | head -1 | awk '{print ($3=="ms") ? $2/1000 : $2}')
      bpe=$(sed -n 's/.*peak memory per process [0-9.]* MB (max), \([0-9.]*\) bytes\/event.*/\1/p' "$out/err")
      # Above the empty process: (peak - empty peak) / events of the largest process.
      above=$(sed -n 's/.*peak memory per process \([0-9.]*\) MB (max), [0-9.]* bytes\/event, \([0-9]*\) events on.*/\1 \2/p' "$out/err" |
        awk -v z="${empty[$kind]}" '{ printf "%.1f", ($1 - z) * 1e6 / $2 }')
      whatif=$(sed -n 's/^cpreplay: what-if *\.\.\. \([0-9.]*\) s.*/\1/p' "$out/err")
      rows[$kind-$wi]="${rows[$kind-$wi]:-}$(awk -v e="$events" -v l="$loadt" -v a="$analysis" \
        -v b="$bpe" -v z="$above" -v w="${whatif:--}" \
        'BEGIN { printf "%d %.3g %.3g %s %s %s\n", e, e / l, e / a, b, z, w }')"$'\n'
    done
  done
done
echo "bench/hybrid.sh: $(date -u +%F), load average at start $load, $repeat alternating runs each"
echo "empty analysis process (2 iterations): hybrid ${empty[hybrid]} MB, mpi ${empty[mpi]} MB per process"
printf '%-8s %-8s %10s %16s %16s %12s %12s %10s\n' trace what-if events "load events/s" "all events/s" \
  "bytes/event" "above empty" "what-if s"
for kind in hybrid mpi; do
  for wi in off on; do
    while read -r e l a b z w; do
      if [ -n "$e" ]; then
        printf '%-8s %-8s %10s %16s %16s %12s %12s %10s\n' "$kind" "$wi" "$e" "$l" "$a" "$b" "$z" "$w"
      fi
    done <<< "${rows[$kind-$wi]}"
  done
done
