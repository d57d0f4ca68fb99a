#!/usr/bin/env bash
# Instruction counts (valgrind's callgrind) of one analysis process, with the defaults and with
# --no-what-if, and the what-if phase's parts: exact and repeatable, where wall times on a
# shared machine drift by 10-30 % between series (bench/RESULTS.md, session 23). They stand in
# for time only where a change does not move cache misses, so a change kept for speed still
# needs its alternating timed runs (bench/real.sh, farm-bench). Nothing here is asserted by the
# test suite.
#
# usage: bench/instructions.sh [--build DIR] [--vs DIR] [--trace ANCHOR]
#   --vs DIR: a second build (its cpreplay) counted beside the first, for A/B
#   default trace: simtrace.py stencil --ranks 4 --iters 5000 --seed 11 (568,032 events), made
#   once into /tmp/cpreplay-bench/; about 40 s per run under callgrind, two runs per build.
#   Needs valgrind (scripts/install-deps.sh --with-bench).
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
builds=("$here/build") trace=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) builds[0]=$2; shift 2 ;;
    --vs) builds+=("$2"); shift 2 ;;
    --trace) trace=$2; shift 2 ;;
    *) echo "usage: bench/instructions.sh [--build DIR] [--vs DIR] [--trace ANCHOR]" >&2; exit 2 ;;
  esac
done
for tool in valgrind callgrind_annotate; do
  command -v "$tool" >/dev/null ||
    { echo "bench/instructions.sh: needs $tool (bash scripts/install-deps.sh --with-bench)" >&2; exit 1; }
done
for b in "${builds[@]}"; do
  [ -x "$b/cpreplay" ] || { echo "bench/instructions.sh: no $b/cpreplay (build first)" >&2; exit 1; }
done
if [ -z "$trace" ]; then
  dir=/tmp/cpreplay-bench/stencil-r4-i5000
  [ -f "$dir/traces.otf2" ] || /usr/bin/python3 "$here/../shared/tools/simtrace.py" stencil "$dir" \
    --ranks 4 --iters 5000 --seed 11 >&2
  trace="$dir/traces.otf2"
fi
[ -f "$trace" ] || { echo "bench/instructions.sh: no trace $trace" >&2; exit 1; }
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT

# Inclusive instructions of the first function whose name matches $2, from callgrind output $1
# (awk reads to the end: an early exit would fail the pipe under pipefail).
incl() {
  callgrind_annotate --inclusive=yes "$1" 2>/dev/null |
    awk -v pat="$2" '!found && $0 ~ pat { gsub(",", "", $1); v = $1; found = 1 }
                     END { print found ? v : 0 }'
}
total() {
  callgrind_annotate "$1" 2>/dev/null |
    awk '!found && /PROGRAM TOTALS/ { gsub(",", "", $1); v = $1; found = 1 } END { print v + 0 }'
}
m() { awk -v x="$1" 'BEGIN { printf "%.1f M", x / 1e6 }'; }

echo "bench/instructions.sh: $(date -u '+%F %H:%M UTC'), $trace, one process (instructions, callgrind)"
printf '%-34s' ""
for b in "${builds[@]}"; do printf ' %16s' "$(basename "$(cd "$b" && pwd)")"; done
echo
rows=("defaults, whole run" "--no-what-if, whole run" "defaults / --no-what-if"
      "what-if phase" "  preparation" "  forward steps" "    balance walks" "    completions' records"
      "  slack steps" "  reading records" "reading the events (--no-what-if)")
declare -A value
for i in "${!builds[@]}"; do
  cp="${builds[$i]}/cpreplay"
  valgrind --tool=callgrind --callgrind-out-file="$scratch/d$i" "$cp" -q -o "$scratch/d.cubex" \
    "$trace" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; exit 1; }
  valgrind --tool=callgrind --callgrind-out-file="$scratch/n$i" "$cp" -q --no-what-if \
    -o "$scratch/n.cubex" "$trace" >/dev/null 2>"$scratch/err" || { cat "$scratch/err" >&2; exit 1; }
  d=$(total "$scratch/d$i") n=$(total "$scratch/n$i")
  value["$i,0"]=$(m "$d")
  value["$i,1"]=$(m "$n")
  value["$i,2"]=$(awk -v a="$d" -v b="$n" 'BEGIN { printf "%.3f x", a / b }')
  value["$i,3"]=$(m "$(incl "$scratch/d$i" 'Pipeline::what_if')")
  value["$i,4"]=$(m "$(incl "$scratch/d$i" 'Retimer::prepare\(')")
  value["$i,5"]=$(m "$(incl "$scratch/d$i" 'RankRetimer::forward_step\(')")
  value["$i,6"]=$(m "$(incl "$scratch/d$i" 'RankRetimer::visit_factor\(')")
  value["$i,7"]=$(m "$(incl "$scratch/d$i" 'RankRetimer::completions_from<')")
  value["$i,8"]=$(m "$(incl "$scratch/d$i" 'RankRetimer::backward_step\(')")
  value["$i,9"]=$(m "$(incl "$scratch/d$i" 'RankRetimer::receive\(')")
  value["$i,10"]=$(m "$(incl "$scratch/n$i" 'io::read_events\(')")
done
for r in "${!rows[@]}"; do
  printf '%-34s' "${rows[$r]}"
  for i in "${!builds[@]}"; do printf ' %16s' "${value[$i,$r]}"; done
  echo
done
