#!/usr/bin/env bash
# One trace analyzed on several process counts, side by side (issue 16): wall time, analysis
# phases and peak memory per process for each M. The runs alternate between the counts, so a
# busy machine slows all of them alike. Nothing here is asserted by the test suite.
#
# usage: bench/processes.sh [--repeat K] [--build DIR] ANCHOR M1 [M2 ...]
#   Every M from 1 to the trace's rank count; runs with more processes than cores are bound
#   round-robin (--bind-to core:overload-allowed), as bench/run.sh does.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
build="$here/build" repeat=3
while [ $# -gt 0 ]; do
  case "$1" in
    --repeat) repeat=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    *) break ;;
  esac
done
[ $# -ge 2 ] || { echo "usage: bench/processes.sh [--repeat K] [--build DIR] ANCHOR M1 [M2 ...]" >&2; exit 2; }
trace=$1
shift
counts=("$@")
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay"
[ -x "$cpreplay" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }
ranks=$("$cpreplay" --count-ranks "$trace")
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

load=$(cut -d' ' -f1-3 /proc/loadavg)
declare -A walls
for _ in $(seq "$repeat"); do
  for m in "${counts[@]}"; do
    binding=()
    [ "$m" -gt "$(nproc)" ] && binding=(--bind-to core:overload-allowed)
    /usr/bin/time -f "%e" -o "$out/time" mpirun --oversubscribe "${binding[@]}" -np "$m" \
      "$cpreplay" -v -o "$out/r.cubex" "$trace" >/dev/null 2>"$out/err" ||
      { cat "$out/err" >&2; exit 1; }
    wall=$(tail -n 1 "$out/time")
    walls[$m]="${walls[$m]:-} $wall"
    best=$(echo "${walls[$m]}" | tr ' ' '\n' | sed '/^$/d' | sort -g | head -n 1)
    [ "$wall" = "$best" ] && cp "$out/err" "$out/best-$m.err"
  done
done

printf 'trace   %s (%s ranks, %s cores; load average %s before, %s after)\n' "$trace" "$ranks" \
  "$(nproc)" "$load" "$(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-6s %-10s %-10s %-12s %-16s %-12s %s\n' M "best s" "median s" "phases s" \
  "peak/process MB" "bytes/event" "events on the largest process"
for m in "${counts[@]}"; do
  sorted=$(echo "${walls[$m]}" | tr ' ' '\n' | sed '/^$/d' | sort -g)
  best=$(echo "$sorted" | head -n 1)
  median=$(echo "$sorted" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}')
  err="$out/best-$m.err"
  phases=$(awk '/^cpreplay: (events|preprocess|forward|backward|root causes|reduce|report) *\.\.\./ {
                  for (i = 1; i <= NF; i++) if ($i == "...") {s += $(i + 1); break}}
                END {printf "%.3f", s}' "$err")
  peak=$(sed -n 's/.*peak memory per [a-z]* \([0-9.]*\) MB.*/\1/p' "$err")  # older: "per rank"
  bpe=$(sed -n 's/.*, \([0-9.]*\) bytes\/event.*/\1/p' "$err")
  largest=$(sed -n 's/.*, \([0-9]*\) events on the largest [a-z]*$/\1/p' "$err")
  printf '%-6s %-10s %-10s %-12s %-16s %-12s %s\n' "$m" "$best" "$median" "$phases" "$peak" "$bpe" \
    "$largest"
done
