#!/usr/bin/env bash
# Runs cpreplay on one conformance trace and compares the report with its expected.json.
# usage: run_conformance.sh MPIEXEC CPREPLAY CHECKER TRACE_DIR WORK_DIR METRICS [EXTRA_ARGS...]
# CONFORMANCE_PROCESSES=M runs it on M analysis processes instead of one per traced rank.
# CONFORMANCE_SKIP=m1[:tag],m2 names metrics the checker reports as skipped, with the reason
# its tag names (none: not yet implemented).
set -u
mpiexec=$1 cpreplay=$2 checker=$3 dir=$4 work=$5 metrics=$6
shift 6
if [ ! -f "$dir/expected.json" ]; then
  echo "SKIP: $dir not present (../shared is absent): conformance not checked"
  exit 77
fi
np=$(sed -n 's/.*"locations": *\([0-9][0-9]*\).*/\1/p' "$dir/expected.json" | head -n 1)
np=${CONFORMANCE_PROCESSES:-$np}
mkdir -p "$work"
report="$work/$(basename "$dir").cubex"
rm -f "$report"
"$mpiexec" --oversubscribe -np "$np" "$cpreplay" -q -o "$report" "$@" "$dir/traces.otf2" || {
  echo "FAIL: cpreplay exited with $?"; exit 1; }
if [ -n "${CONFORMANCE_SKIP:-}" ]; then
  exec "$checker" "$report" "$dir/expected.json" "$metrics" "$CONFORMANCE_SKIP"
fi
exec "$checker" "$report" "$dir/expected.json" "$metrics"
