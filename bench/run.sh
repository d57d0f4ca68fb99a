#!/usr/bin/env bash
# Benchmarks cpreplay: per-phase times, events/s, bytes/event and peak memory per process, plus the
# decode-only floor (--read-only). Prints one table; nothing here is asserted by the test suite.
#
# usage: bench/run.sh [--ranks P] [--iters N] [--trace ANCHOR] [--build DIR] [--repeat K] [--no-bind]
#                     [--views] [--what-if] [--processes M]
#   --processes: analyze on M processes (default: one per traced rank)
#   --views: also the cost of --timeline and --overview, from alternating runs with and without
#   --what-if: also the cost of the what-if analysis (on by default), from alternating runs with
#   and without --no-what-if: analysis time (rank 0, to the summary) and peak memory per rank
#   default: the issue's reference trace, simtrace.py stencil --ranks 4 --iters 50000 --seed 11
#   (5,680,032 events; generated once into /tmp/cpreplay-bench/, needs Debian's python3-otf2;
#   without it the project's own cpreplay-mktrace nonblocking scenario is used instead).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=4 iters=50000 trace="" build="$here/build" repeat=3 bind=1 views=0 what_if=0 processes=""
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --iters) iters=$2; shift 2 ;;
    --trace) trace=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --no-bind) bind=0; shift ;;
    --views) views=1; shift ;;
    --what-if) what_if=1; shift ;;
    --processes) processes=$2; shift 2 ;;
    *) echo "usage: bench/run.sh [--ranks P] [--iters N] [--trace ANCHOR] [--build DIR] [--repeat K] [--no-bind] [--views] [--what-if] [--processes M]" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay"
[ -x "$cpreplay" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }

if [ -z "$trace" ]; then
  dir="/tmp/cpreplay-bench/stencil-r$ranks-i$iters"
  if [ ! -f "$dir/traces.otf2" ]; then
    if /usr/bin/python3 -c "import otf2" 2>/dev/null; then
      /usr/bin/python3 "$here/../shared/tools/simtrace.py" stencil "$dir" --ranks "$ranks" \
        --iters "$iters" --seed 11 >&2
    else
      "$build/tests/cpreplay-mktrace" nonblocking "$dir" --ranks "$ranks" --iters "$iters" >&2
    fi
  fi
  trace="$dir/traces.otf2"
fi
traced=$("$cpreplay" --count-ranks "$trace")
np=${processes:-$traced}
# Open MPI binds nothing once ranks outnumber cores, and the kernel then places and migrates
# them unevenly: every phase waits for the rank that got the short straw. Binding round-robin
# (two ranks per core with 4 on 2) makes the runs steadier and faster; --no-bind shows the default.
binding=()
[ "$bind" = 1 ] && [ "$np" -gt "$(nproc)" ] && binding=(--bind-to core:overload-allowed)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

run() {  # run LABEL ARGS... -> best-of-$repeat wall time; phase lines of the best run kept
  local label=$1; shift
  local best=""
  for _ in $(seq "$repeat"); do
    /usr/bin/time -v -o "$out/time" mpirun --oversubscribe "${binding[@]}" -np "$np" "$cpreplay" -v "$@" \
      >"$out/stdout" 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
    # "Elapsed (wall clock) time (h:mm:ss or m:ss): 0:00.96"
    local wall; wall=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, p, ":"); s = 0
      for (i = 1; i <= n; i++) s = s * 60 + p[i]; print s}' "$out/time")
    if [ -z "$best" ] || awk "BEGIN{exit !($wall < $best)}"; then
      best=$wall; cp "$out/stderr" "$out/$label.stderr"; cp "$out/time" "$out/$label.time"
    fi
  done
  echo "$best"
}

full=$(run full -o "$out/r.cubex" "$trace")
floor=$(run floor --read-only "$trace")
events=$(sed -n "s/^cpreplay: events *\.\.\. [0-9.]* s *\([0-9][0-9]*\) events.*/\1/p" "$out/full.stderr" | head -n 1)
phase() { sed -n "s/^cpreplay: $1 *\.\.\. \([0-9.]*\) s.*/\1/p" "$out/full.stderr" | head -n 1; }
root=$(phase 'root causes')
mem_line=$(grep "peak memory per process" "$out/full.stderr" || true)
peak_mb=$(echo "$mem_line" | sed -n 's/.*rank \([0-9.]*\) MB.*/\1/p')
bpe=$(echo "$mem_line" | sed -n 's/.*, \([0-9.]*\) bytes\/event.*/\1/p')
floor_mb=$(sed -n 's/.*peak memory per process \([0-9.]*\) MB.*/\1/p' "$out/floor.stderr")
# time -v's maximum resident set covers mpirun and every rank it reaped: the largest process.
time_mb=$(awk -F': ' '/Maximum resident set size/ {printf "%.1f", $2 * 1024 / 1e6}' "$out/full.time")

printf 'trace            %s\n' "$trace"
printf 'ranks            %s on %s processes (mpirun --oversubscribe %s on %s cores)\n' "$traced" "$np" \
  "${binding[*]:-}" "$(nproc)"
printf 'events           %s\n' "$events"
printf 'phases (s)       definitions %s  events %s  preprocess %s  forward %s  backward %s  root causes %s  reduce %s  report %s\n' \
  "$(phase definitions)" "$(phase events)" "$(phase preprocess)" "$(phase forward)" \
  "$(phase backward)" "$(phase 'root causes')" "$(phase reduce)" "$(phase report)"
printf 'wall (s)         %s full analysis, %s decode only (--read-only), best of %s\n' \
  "$full" "$floor" "$repeat"
phases_sum=$(awk "BEGIN{print $(phase events) + $(phase preprocess) + $(phase forward) + $(phase backward) + ${root:-0} + $(phase reduce) + $(phase report)}")
printf 'events/s         %s wall (incl. mpirun start-up), %s in the analysis phases (%s s)\n' \
  "$(awk "BEGIN{printf \"%.3g\", $events / $full}")" \
  "$(awk "BEGIN{printf \"%.3g\", $events / $phases_sum}")" "$phases_sum"
printf 'peak per process %s MB (%s bytes/event on the largest process); decode only %s MB; /usr/bin/time -v: %s MB\n' \
  "$peak_mb" "$bpe" "$floor_mb" "$time_mb"

if [ "$views" = 1 ]; then
  # Side by side: the two kinds of run alternate, so a busy machine slows both alike.
  best_plain="" best_views="" views_phase=""
  for _ in $(seq "$repeat"); do
    for kind in plain views; do
      extra=()
      [ "$kind" = views ] && extra=(--timeline "$out/t.json" --overview "$out/o.svg")
      /usr/bin/time -f "%e" -o "$out/time" mpirun --oversubscribe "${binding[@]}" -np "$np" \
        "$cpreplay" -o "$out/r.cubex" "${extra[@]}" "$trace" >/dev/null 2>"$out/stderr" ||
        { cat "$out/stderr" >&2; exit 1; }
      wall=$(tail -n 1 "$out/time")
      if [ "$kind" = plain ]; then
        if [ -z "$best_plain" ] || awk "BEGIN{exit !($wall < $best_plain)}"; then best_plain=$wall; fi
      elif [ -z "$best_views" ] || awk "BEGIN{exit !($wall < $best_views)}"; then
        best_views=$wall
        views_phase=$(sed -n 's/^cpreplay: views *\.\.\. \([0-9.]*\) s.*/\1/p' "$out/stderr")
      fi
    done
  done
  printf 'views (s)        %s without, %s with --timeline --overview (%+.0f %%), best of %s alternating; views phase %s s\n' \
    "$best_plain" "$best_views" "$(awk "BEGIN{print 100 * ($best_views / $best_plain - 1)}")" \
    "$repeat" "$views_phase"
  printf 'view files       timeline %s MB, overview %s kB; %s\n' \
    "$(awk "BEGIN{printf \"%.1f\", $(stat -c %s "$out/t.json") / 1e6}")" \
    "$(awk "BEGIN{printf \"%.0f\", $(stat -c %s "$out/o.svg") / 1e3}")" \
    "$(grep -o 'timeline: .*' "$out/stderr" || echo "timeline complete")"
fi

if [ "$what_if" = 1 ]; then
  # Side by side: runs with and without the what-if analysis alternate, so a busy machine slows
  # both alike; best of $repeat each. "analysis" is rank 0's time from start to the summary.
  best_off="" best_on="" phase_on="" mem_off="" mem_on="" split=""
  for _ in $(seq "$repeat"); do
    for kind in off on; do
      extra=()
      [ "$kind" = off ] && extra=(--no-what-if)
      mpirun --oversubscribe "${binding[@]}" -np "$np" "$cpreplay" -v -o "$out/r.cubex" \
        "${extra[@]}" "$trace" >"$out/stdout" 2>"$out/stderr" || { cat "$out/stderr" >&2; exit 1; }
      t=$(sed -n 's/.* analysis \([0-9.]*\) \(m\?s\)$/\1 \2/p' "$out/stdout" | head -n 1 |
          awk '{print ($2 == "ms") ? $1 / 1000 : $1}')
      mem=$(sed -n 's/.*peak memory per [a-z]* \([0-9.]*\) MB.*/\1/p' "$out/stderr")  # older: "per rank"
      if [ "$kind" = off ]; then
        if [ -z "$best_off" ] || awk "BEGIN{exit !($t < $best_off)}"; then best_off=$t; mem_off=$mem; fi
      elif [ -z "$best_on" ] || awk "BEGIN{exit !($t < $best_on)}"; then
        best_on=$t; mem_on=$mem
        phase_on=$(sed -n 's/^cpreplay: what-if *\.\.\. \([0-9.]*\) s.*/\1/p' "$out/stderr")
        split=$(sed -n 's/^cpreplay: what-if *\.\.\. [0-9.]* s *\(.*\)/\1/p' "$out/stderr" | sed 's/  \[rank 0.*//')
      fi
    done
  done
  printf 'what-if (s)      analysis %s without, %s with (%+.0f %%, x%.2f), best of %s alternating; what-if phase %s s\n' \
    "$best_off" "$best_on" "$(awk "BEGIN{print 100 * ($best_on / $best_off - 1)}")" \
    "$(awk "BEGIN{print $best_on / $best_off}")" "$repeat" "$phase_on"
  printf 'what-if phase    %s\n' "$split"
  printf 'what-if memory   peak per process %s MB without, %s MB with (%+.1f %%)\n' "$mem_off" "$mem_on" \
    "$(awk "BEGIN{print 100 * ($mem_on / $mem_off - 1)}")"
fi
