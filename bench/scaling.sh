#!/usr/bin/env bash
# Time against trace size: runs cpreplay on cpreplay-mktrace traces from ~10^2 to ~10^7 events
# (10^8 with --large), K runs each, and prints per size the median time of the analysis phases
# (events + preprocess + forward + backward + reduce + report, rank 0's progress lines),
# events/s and peak memory per process. The smallest trace measures the fixed per-run cost a (opening the archive and
# OTF2's chunk buffers on every rank, communicators, the report); the events/s of each
# larger trace once a is taken off show whether the cost per event stays the same. Nothing here
# is asserted by the test suite.
#
# Ranks outnumbering cores are bound round-robin to the cores (see bench/run.sh); --no-bind
# leaves their placement to the kernel.
#
# usage: bench/scaling.sh [--ranks P] [--build DIR] [--repeat K] [--large] [--no-bind]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
ranks=4 build="$here/build" repeat=7 large=0 bind=1
while [ $# -gt 0 ]; do
  case "$1" in
    --ranks) ranks=$2; shift 2 ;;
    --build) build=$2; shift 2 ;;
    --repeat) repeat=$2; shift 2 ;;
    --large) large=1; shift ;;
    --no-bind) bind=0; shift ;;
    *) echo "usage: bench/scaling.sh [--ranks P] [--build DIR] [--repeat K] [--large] [--no-bind]" >&2; exit 2 ;;
  esac
done
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cpreplay="$build/cpreplay" mktrace="$build/tests/cpreplay-mktrace"
[ -x "$cpreplay" ] && [ -x "$mktrace" ] || { echo "bench: build first (bash scripts/build.sh)" >&2; exit 1; }
binding=()
[ "$bind" = 1 ] && [ "$ranks" -gt "$(nproc)" ] && binding=(--bind-to core:overload-allowed)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# nonblocking: 28 events per rank and iteration (Isend/Irecv halo, Waitall, Allreduce). The
# iteration counts give 1.12 x 10^5, 10^6, 10^7 (and 1.01 x 10^8) events whatever the rank count.
iters="1"
for total in 4000 40000 400000; do iters="$iters $(( total / ranks > 0 ? total / ranks : 1 ))"; done
[ "$large" = 1 ] && iters="$iters $(( 3600000 / ranks ))"
printf '%-12s %-10s %-12s %-12s %-10s\n' events "median s" "events/s" "peak/rank" "runs"
rows="$out/rows"
: >"$rows"
for n in $iters; do
  dir="/tmp/cpreplay-bench/nonblocking-r$ranks-i$n"
  [ -f "$dir/traces.otf2" ] || "$mktrace" nonblocking "$dir" --ranks "$ranks" --iters "$n" >/dev/null
  k=$repeat
  [ $(( n * ranks )) -ge 400000 ] && k=$(( repeat < 3 ? repeat : 3 ))  # large traces vary less
  : >"$out/times"
  for _ in $(seq "$k"); do
    mpirun --oversubscribe "${binding[@]}" -np "$ranks" "$cpreplay" -v -o "$out/r.cubex" "$dir/traces.otf2" \
      >/dev/null 2>"$out/err" || { cat "$out/err" >&2; exit 1; }
    awk '/^cpreplay: (events|preprocess|forward|backward|reduce|report) *\.\.\./ {s += $4}
         /^cpreplay: events *\.\.\./ {e = $6}
         /peak memory per process/ {m = $6}
         END {print s, e, m}' "$out/err" >>"$out/times"
  done
  sort -n "$out/times" | awk -v k="$k" 'NR == int((k + 1) / 2) {print}' >>"$rows"
  tail -n 1 "$rows" | awk -v k="$k" '{printf "%-12d %-10.4f %-12.3g %-12s %-10d\n", $2, $1, $2 / $1, $3 " MB", k}'
done

# The smallest trace (a few events per rank) measures the fixed per-run cost a; each larger row
# then gives the cost per event, N / (T - a), and the spread of those says how linear T is.
awk 'NR == 1 {a = $1; a_events = $2; next}
     {x = $2; r = x / ($1 - a); R[++n] = r; X[n] = x; if (n == 1 || r < lo) lo = r; if (n == 1 || r > hi) hi = r; s += r}
     END {
       printf "\nfixed per-run cost a = %.4f s (the %d-event trace)\n", a, a_events
       printf "%-12s %-24s\n", "events", "events/s after a"
       for (i = 1; i <= n; i++) printf "%-12d %-24.3g\n", X[i], R[i]
       m = s / n
       printf "spread: %.0f %% below and %.0f %% above their mean (%.3g events/s)\n", 100 * (m - lo) / m, 100 * (hi - m) / m, m
     }' "$rows"
