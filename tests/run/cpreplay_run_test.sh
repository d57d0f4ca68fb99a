#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# cpreplay-run end to end, with fakeapp (tests/support/fakeapp.cpp) as the Score-P-instrumented
# application: the experiment's name, the two commands, the report and JSON it leaves, the
# refusals and the one-line errors with their exit statuses.
#
# usage: cpreplay_run_test.sh CASE CPREPLAY_RUN FAKEAPP CPREPLAY MPIEXEC PYTHON WORK_DIR MAN_PAGE
#   CASE: usage | dry_run | measure | options | srun | refusal | failures
# shellcheck disable=SC2010  # ls | grep on file names this script chose
set -euo pipefail
case_name=$1 run=$2 fakeapp=$3 cpreplay=$4 mpiexec=$5 python=$6 work=$7 man_page=$8

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [ "$2" == "$3" ] || fail "$1: got [$2], expected [$3]"; }
quoted() { local line; printf -v line '%q ' "$@"; echo "${line% }"; }

rm -rf "$work"
mkdir -p "$work"
cd "$work"
# Only what a test sets: no Score-P or OpenMP settings from the caller's environment.
for name in $(compgen -e); do
  case $name in SCOREP_* | OMP_NUM_THREADS | CPREPLAY | CPREPLAY_DRY_RUN | FAKEAPP_*) unset "$name" ;; esac
done
# The build tree's cpreplay-run runs the cpreplay built beside it.
[ "$(dirname "$run")/cpreplay" -ef "$cpreplay" ] || fail "$run is not beside $cpreplay"
launcher=(--oversubscribe)  # two cores: more processes than cores

# outcome NAME CMD...: runs CMD, leaving its exit status in $rc, stdout in NAME.out, stderr in
# NAME.err and the last line of stderr in $last.
outcome() {
  local name=$1
  shift
  set +e
  "$@" > "$name.out" 2> "$name.err"
  rc=$?
  set -e
  last=$(tail -n 1 "$name.err")
}
# refused WHAT STATUS LINE CMD...: CMD exits with STATUS, its stderr is LINE alone, and it
# created nothing in the working directory.
refused() {
  local what=$1 status=$2 line=$3
  shift 3
  local before
  before=$(ls -A)
  outcome refused "$@"
  expect_eq "$what: exit status" "$rc" "$status"
  expect_eq "$what: stderr" "$(cat refused.err)" "$line"
  expect_eq "$what: stdout" "$(cat refused.out)" ""
  expect_eq "$what: files afterwards" "$(ls -A | grep -v '^refused\.')" "$(grep -v '^refused\.' <<< "$before" || true)"
}
# json_check FILE PYTHON_EXPRESSION: the expression holds for the JSON document s.
json_check() {
  "$python" -c 'import json, sys; s = json.load(open(sys.argv[1])); assert eval(sys.argv[2]), s' \
    "$1" "$2" || fail "$1: $2"
}

case $case_name in

# ---- bad input: one line naming the option, exit status 2, nothing created -----------------
usage)
  usage_line="usage: cpreplay-run [options] LAUNCHER [launcher options] -np N APP [app arguments]"
  refused "unknown option" 2 "cpreplay-run: error: unknown option '--frobnicate' (see cpreplay-run --help)" \
    "$run" --frobnicate "$mpiexec" -np 2 "$fakeapp"
  refused "cpreplay option cpreplay-run does not pass on" 2 \
    "cpreplay-run: error: unknown option '--count-ranks' (see cpreplay-run --help)" \
    "$run" --count-ranks "$mpiexec" -np 2 "$fakeapp"
  refused "no launcher" 2 "cpreplay-run: error: no launcher and application given; $usage_line" "$run"
  refused "only options" 2 "cpreplay-run: error: no launcher and application given; $usage_line" "$run" --force
  refused "not a launcher" 2 \
    "cpreplay-run: error: '$fakeapp' is not an MPI launcher (mpirun, mpiexec or srun); $usage_line" \
    "$run" "$fakeapp"
  refused "missing application" 2 \
    "cpreplay-run: error: no application after '$(quoted "$mpiexec" -np 2)'; $usage_line" \
    "$run" "$mpiexec" -np 2
  refused "application that does not exist" 2 \
    "cpreplay-run: error: the application './no-such-app' is not an executable file" \
    "$run" "$mpiexec" -np 2 ./no-such-app
  refused "application not on PATH" 2 \
    "cpreplay-run: error: the application 'no-such-app-on-path' is not an executable on PATH" \
    "$run" "$mpiexec" -np 2 no-such-app-on-path
  refused "launcher without -np" 2 \
    "cpreplay-run: error: $mpiexec: no process count: give it as -np N or -n N (it names the experiment and sizes the analysis)" \
    "$run" "$mpiexec" "$fakeapp"
  refused "srun without -n" 2 \
    "cpreplay-run: error: srun: no process count: give it as -n N or --ntasks N (it names the experiment and sizes the analysis)" \
    "$run" --dry-run srun -N 2 "$fakeapp"
  refused "-np without a number" 2 \
    "cpreplay-run: error: $mpiexec: -np must be a whole number of processes from 1, not 'x'" \
    "$run" "$mpiexec" -np x "$fakeapp"
  refused "-np 0" 2 "cpreplay-run: error: $mpiexec: -np must be a whole number of processes from 1, not '0'" \
    "$run" "$mpiexec" -np 0 "$fakeapp"
  refused "-np at the end" 2 "cpreplay-run: error: $mpiexec: -np needs a process count" \
    "$run" "$mpiexec" -np
  refused "count twice" 2 "cpreplay-run: error: $mpiexec: the process count is given twice (-np and -n)" \
    "$run" "$mpiexec" -np 2 -n 2 "$fakeapp"
  refused "MPMD" 2 \
    "cpreplay-run: error: $mpiexec: MPMD launches (':') are not supported: cpreplay-run measures one application" \
    "$run" "$mpiexec" -np 2 : -np 2 "$fakeapp"
  for bad in 0 x 5 -1 1.5 04; do
    refused "--processes $bad" 2 \
      "cpreplay-run: error: --processes must be a whole number from 1 to 4 (the application's processes), not '$bad'" \
      "$run" --processes "$bad" "$mpiexec" -np 4 "$fakeapp"
  done
  refused "--processes=5" 2 \
    "cpreplay-run: error: --processes must be a whole number from 1 to 4 (the application's processes), not '5'" \
    "$run" --processes=5 "$mpiexec" -np 4 "$fakeapp"
  refused "--processes without a value" 2 "cpreplay-run: error: --processes needs a value (see cpreplay-run --help)" \
    "$run" --processes
  refused "--processes= empty" 2 "cpreplay-run: error: --processes needs a value (see cpreplay-run --help)" \
    "$run" --processes= "$mpiexec" -np 4 "$fakeapp"
  for bad in 0 lots 12X -5M; do
    refused "--total-memory $bad" 2 \
      "cpreplay-run: error: --total-memory must be a size such as 512M (bytes, or a whole number with k, M or G), not '$bad'" \
      "$run" --total-memory "$bad" "$mpiexec" -np 2 "$fakeapp"
  done
  refused "--force with a value" 2 "cpreplay-run: error: --force takes no value (see cpreplay-run --help)" \
    "$run" --force=yes "$mpiexec" -np 2 "$fakeapp"
  refused "--dry-run with a value" 2 "cpreplay-run: error: --dry-run takes no value (see cpreplay-run --help)" \
    "$run" --dry-run=1 "$mpiexec" -np 2 "$fakeapp"
  # cpreplay's own options are checked by cpreplay before the application runs.
  refused "bad --window" 2 "cpreplay: error: --window must be at least 1 (see cpreplay --help)" \
    "$run" --window 0 "$mpiexec" -np 2 "$fakeapp"
  refused "bad --what-if" 2 "cpreplay: error: --what-if 'compute' must be REGION=FACTOR (see cpreplay --help)" \
    "$run" --what-if compute "$mpiexec" -np 2 "$fakeapp"
  refused "bad --near-critical" 2 \
    "cpreplay: error: --near-critical '2' must be a number from 0 to 1 (a share of the runtime) (see cpreplay --help)" \
    "$run" --near-critical 2 "$mpiexec" -np 2 "$fakeapp"
  refused "--json twice" 2 \
    "cpreplay-run: error: --json given twice (see cpreplay-run --help)" \
    "$run" --json a.json --json b.json "$mpiexec" -np 2 "$fakeapp"
  # The measurement's environment.
  SCOREP_ENABLE_TRACING=false refused "tracing switched off" 2 \
    "cpreplay-run: error: SCOREP_ENABLE_TRACING=false in the environment: cpreplay-run records a trace (unset it)" \
    "$run" "$mpiexec" -np 2 "$fakeapp"
  OMP_NUM_THREADS=many refused "OMP_NUM_THREADS not a number" 2 \
    "cpreplay-run: error: OMP_NUM_THREADS 'many' is not a thread count (the experiment is named after it)" \
    "$run" "$mpiexec" -np 2 "$fakeapp"
  refused "launcher not found" 2 "cpreplay-run: error: the launcher './mpirun' is not found" \
    "$run" ./mpirun -np 2 "$fakeapp"
  refused "-o twice" 2 "cpreplay-run: error: --output given twice (see cpreplay-run --help)" \
    "$run" -o a.cubex --output b.cubex "$mpiexec" -np 2 "$fakeapp"

  # --help: the cpreplay options it passes on are cpreplay's, but for those that make no sense
  # around a measurement (they print something and exit, or only decode).
  "$run" --help > help.out
  grep -qF "Usage: cpreplay-run [options] LAUNCHER" help.out || fail "--help: no usage line"
  passed=$(sed -n '/^cpreplay.s options, passed on/,/^Exit status/p' help.out |
           grep -oE -- '(^| )--?[a-z][a-z-]*' | tr -d ' ' | LC_ALL=C sort -u)
  own=$("$cpreplay" --help | grep -oE '^  (-[a-z] \[ )?--[a-z-]+' | grep -oE -- '--[a-z-]+' |
        grep -vxE -- '--(help|version|count-ranks|count-events|read-only)' | LC_ALL=C sort -u)
  expect_eq "cpreplay options passed on" "$(grep -- '^--' <<< "$passed")" "$own"
  # Every option of --help, its own and those passed on, has its place in the man page.
  mine=$(sed -n '/^Options of cpreplay-run/,/^cpreplay.s options, passed on/p' help.out |
         grep -oE -- '^  (-[a-z], )?--[a-z-]+' | grep -oE -- '--[a-z-]+')
  page=$(sed 's/\\-/-/g' "$man_page")
  for option in $mine $passed; do
    grep -qE -- "(^|[ \"])$option([ ,\"]|$)" <<< "$page" || fail "$man_page does not name $option"
  done
  # --version is cpreplay's.
  expect_eq "--version" "$("$run" --version)" "$("$cpreplay" --version)"
  ;;

# ---- --dry-run: the exact commands, nothing run or created ---------------------------------
dry_run)
  anchor=scorep_fakeapp_4_trace/traces.otf2
  out=$("$run" --dry-run "$mpiexec" "${launcher[@]}" -np 4 "$fakeapp" -s 3 input.dat)
  expect_eq "mpirun dry run" "$out" \
    "$(quoted env SCOREP_ENABLE_PROFILING=false SCOREP_ENABLE_TRACING=true \
         SCOREP_EXPERIMENT_DIRECTORY=scorep_fakeapp_4_trace "$mpiexec" \
         -x SCOREP_ENABLE_PROFILING -x SCOREP_ENABLE_TRACING -x SCOREP_EXPERIMENT_DIRECTORY \
         "${launcher[@]}" -np 4 "$fakeapp" -s 3 input.dat)
$(quoted "$mpiexec" "${launcher[@]}" -np 4 "$cpreplay" -o scorep_fakeapp_4_trace/cpreplay.cubex \
    --json scorep_fakeapp_4_trace/cpreplay.json $anchor)"
  expect_eq "files after dry runs" "$(ls -A)" ""

  # OpenMP threads in the name, --processes, --total-memory, cpreplay's options, the user's
  # own Score-P settings kept; launcher options with values (--map-by core) stay in both.
  out=$(OMP_NUM_THREADS=2,1 SCOREP_FILTERING_FILE=my.filt SCOREP_ENABLE_PROFILING=true \
        "$run" --dry-run --processes 3 --total-memory 64M --what-if compute=0.5 -q --json run.json \
        "$mpiexec" --map-by core -np 4 "$fakeapp")
  exp=scorep_fakeapp_4x2_trace
  expect_eq "dry run with options" "$out" \
    "$(quoted env SCOREP_ENABLE_PROFILING=true SCOREP_ENABLE_TRACING=true \
         SCOREP_EXPERIMENT_DIRECTORY=$exp SCOREP_FILTERING_FILE=my.filt SCOREP_TOTAL_MEMORY=64M \
         "$mpiexec" -x SCOREP_ENABLE_PROFILING -x SCOREP_ENABLE_TRACING \
         -x SCOREP_EXPERIMENT_DIRECTORY -x SCOREP_FILTERING_FILE -x SCOREP_TOTAL_MEMORY \
         --map-by core -np 4 "$fakeapp")
$(quoted "$mpiexec" --map-by core -np 3 "$cpreplay" -o $exp/cpreplay.cubex --json run.json \
    --what-if compute=0.5 -q $exp/traces.otf2)"
  # The user's experiment name and memory setting win over the defaults.
  out=$(SCOREP_EXPERIMENT_DIRECTORY=mine SCOREP_TOTAL_MEMORY=1G \
        "$run" --dry-run "$mpiexec" -n 2 "$fakeapp")
  expect_eq "user's SCOREP_EXPERIMENT_DIRECTORY" "$out" \
    "$(quoted env SCOREP_ENABLE_PROFILING=false SCOREP_ENABLE_TRACING=true \
         SCOREP_EXPERIMENT_DIRECTORY=mine SCOREP_TOTAL_MEMORY=1G "$mpiexec" \
         -x SCOREP_ENABLE_PROFILING -x SCOREP_ENABLE_TRACING -x SCOREP_EXPERIMENT_DIRECTORY \
         -x SCOREP_TOTAL_MEMORY -n 2 "$fakeapp")
$(quoted "$mpiexec" -n 2 "$cpreplay" -o mine/cpreplay.cubex --json mine/cpreplay.json mine/traces.otf2)"

  # srun (not installed here: a dry run only): its spellings of the count, replaced by
  # --processes in the analysis; no -x (srun passes the environment on).
  for count in "-n 4" "--ntasks 4" "--ntasks=4" "-n4"; do
    read -r -a words <<< "$count"
    out=$("$run" --dry-run --processes 2 srun -N 1 "${words[@]}" --mpi=pmix "$fakeapp")
    two=("${words[@]}")
    two[${#two[@]}-1]=${two[${#two[@]}-1]/4/2}
    expect_eq "srun $count" "$out" \
      "$(quoted env SCOREP_ENABLE_PROFILING=false SCOREP_ENABLE_TRACING=true \
           SCOREP_EXPERIMENT_DIRECTORY=scorep_fakeapp_4_trace srun -N 1 "${words[@]}" --mpi=pmix "$fakeapp")
$(quoted srun -N 1 "${two[@]}" --mpi=pmix "$cpreplay" -o scorep_fakeapp_4_trace/cpreplay.cubex \
      --json scorep_fakeapp_4_trace/cpreplay.json $anchor)"
  done
  # A launcher option of unknown arity followed by a word that is no executable: its value.
  out=$("$run" --dry-run srun --some-option value -n 1 "$fakeapp" | tail -n 1)
  expect_eq "unknown launcher option with a value" "$out" \
    "$(quoted srun --some-option value -n 1 "$cpreplay" -o scorep_fakeapp_1_trace/cpreplay.cubex \
         --json scorep_fakeapp_1_trace/cpreplay.json scorep_fakeapp_1_trace/traces.otf2)"

  # Called through a symbolic link (a user's ~/bin), it still runs the cpreplay beside it.
  mkdir links
  ln -s "$run" links/cpreplay-run
  out=$(links/cpreplay-run --dry-run "$mpiexec" -np 1 "$fakeapp")
  expect_eq "through a symbolic link" "${out##*$'\n'}" "$(quoted "$mpiexec" -np 1 "$cpreplay" \
    -o scorep_fakeapp_1_trace/cpreplay.cubex --json scorep_fakeapp_1_trace/cpreplay.json \
    scorep_fakeapp_1_trace/traces.otf2)"
  rm -r links

  # --force on an existing experiment: the dry run says it would move it, and does not.
  mkdir scorep_fakeapp_4_trace
  touch scorep_fakeapp_4_trace/keep
  out=$("$run" --dry-run --force "$mpiexec" -np 4 "$fakeapp")
  out=${out%%$'\n'*}
  [[ $out =~ ^mv\ --\ scorep_fakeapp_4_trace\ scorep_fakeapp_4_trace\.old-[0-9]{8}_[0-9]{6}$ ]] ||
    fail "--dry-run --force: first line [$out]"
  expect_eq "files after the --force dry run" "$(find . | LC_ALL=C sort)" \
    "$(printf '%s\n' . ./scorep_fakeapp_4_trace ./scorep_fakeapp_4_trace/keep)"
  ;;

# ---- measurement and analysis for real -----------------------------------------------------
measure)
  outcome measure "$run" --total-memory 64M "$mpiexec" "${launcher[@]}" -np 4 "$fakeapp"
  [ "$rc" = 0 ] || { cat measure.err; fail "cpreplay-run mpirun -np 4 fakeapp: exit status $rc"; }
  exp=scorep_fakeapp_4_trace
  expect_eq "files" "$(ls -A | grep -v '^measure\.')" "$exp"
  expect_eq "experiment" "$(cd $exp && ls)" "$(printf '%s\n' cpreplay.cubex cpreplay.json scorep.cfg \
    traces traces.def traces.otf2)"
  # What the application's processes saw (fakeapp writes every SCOREP_* variable to scorep.cfg).
  expect_eq "scorep.cfg" "$(cat $exp/scorep.cfg)" "SCOREP_ENABLE_PROFILING=false
SCOREP_ENABLE_TRACING=true
SCOREP_EXPERIMENT_DIRECTORY=$exp
SCOREP_TOTAL_MEMORY=64M"
  # fakeapp's trace: 14 events per rank; Wait at Barrier 0.1 s x (3 + 2 + 1 + 0) ranks.
  json_check $exp/cpreplay.json 's["ranks"] == 4 and s["events"] == 56 and s["processes"]["count"] == 4'
  json_check $exp/cpreplay.json 's["report"].endswith("'$exp'/cpreplay.cubex")'
  json_check $exp/cpreplay.json '[w["metric"] for w in s["wait_states"]] == ["mpi_barrier_wait"]'
  json_check $exp/cpreplay.json 'abs(s["wait_states"][0]["seconds"] - 0.6) < 1e-9'
  json_check $exp/cpreplay.json 'abs(s["wall_clock_s"] - 0.511) < 1e-9'
  # The summary on stdout, the two commands on stderr.
  grep -q "Wait at Barrier" measure.out || fail "no summary on stdout"
  expect_eq "progress lines" "$(grep '^cpreplay-run:' measure.err)" \
    "cpreplay-run: measuring: $(quoted env SCOREP_ENABLE_PROFILING=false SCOREP_ENABLE_TRACING=true \
       SCOREP_EXPERIMENT_DIRECTORY=$exp SCOREP_TOTAL_MEMORY=64M "$mpiexec" \
       -x SCOREP_ENABLE_PROFILING -x SCOREP_ENABLE_TRACING -x SCOREP_EXPERIMENT_DIRECTORY \
       -x SCOREP_TOTAL_MEMORY "${launcher[@]}" -np 4 "$fakeapp")
cpreplay-run: analyzing: $(quoted "$mpiexec" "${launcher[@]}" -np 4 "$cpreplay" -o $exp/cpreplay.cubex \
       --json $exp/cpreplay.json $exp/traces.otf2)"

  # Words with spaces and glob characters stay words: the user's experiment name, the
  # application's arguments.
  mkdir "bin dir"
  cp "$fakeapp" "bin dir/my app"
  touch a1 a2
  SCOREP_EXPERIMENT_DIRECTORY="run of * 2" outcome spaces "$run" -q "$mpiexec" "${launcher[@]}" \
    -np 2 "./bin dir/my app" "a*" "two words"
  [ "$rc" = 0 ] || { cat spaces.err; fail "spaces: exit status $rc"; }
  json_check "run of * 2/cpreplay.json" 's["ranks"] == 2 and s["events"] == 28'
  expect_eq "spaces: the experiment's Score-P setting" \
    "$(grep EXPERIMENT "run of * 2/scorep.cfg")" "SCOREP_EXPERIMENT_DIRECTORY=run of * 2"
  ;;

# ---- fewer analysis processes, OpenMP naming, cpreplay's options passed on ----------------
options)
  export OMP_NUM_THREADS=2
  outcome options "$run" --processes 3 --what-if compute=0 --json run.json -o run.cubex -q \
    "$mpiexec" "${launcher[@]}" -np 4 "$fakeapp"
  [ "$rc" = 0 ] || { cat options.err; fail "cpreplay-run --processes 3: exit status $rc"; }
  expect_eq "-q: nothing of cpreplay-run's on stderr" "$(grep -c '^cpreplay-run' options.err || true)" 0
  exp=scorep_fakeapp_4x2_trace
  [ -f $exp/traces.otf2 ] || fail "no $exp/traces.otf2"
  [ -s run.cubex ] || fail "-o run.cubex: no report"
  [ ! -e $exp/cpreplay.cubex ] || fail "-o run.cubex: also $exp/cpreplay.cubex"
  json_check run.json 's["processes"] == {"count": 3, "ranks_min": 1, "ranks_max": 2}'
  json_check run.json 's["ranks"] == 4 and abs(s["wait_states"][0]["seconds"] - 0.6) < 1e-9'
  # Without compute every rank reaches the barrier at 0.1 s: the run ends at 0.111 s.
  json_check run.json '[c["changes"] for c in s["what_if"]["scenarios"]] == [{"compute": 0}]'
  json_check run.json 'abs(s["what_if"]["scenarios"][0]["runtime_s"] - 0.111) < 1e-6'
  ;;

# ---- srun for real, through a stand-in srun that starts the tasks with mpirun ---------------
srun)
  mkdir shim
  # shellcheck disable=SC2016  # the stand-in's own variables
  printf '%s\n' '#!/bin/bash' 'set -euo pipefail' 'n="" rest=()' \
    'while [ $# -gt 0 ]; do case $1 in' \
    '  -n | --ntasks) n=$2; shift 2 ;;' '  --ntasks=*) n=${1#*=}; shift ;;' '  -n[0-9]*) n=${1#-n}; shift ;;' \
    '  -N | -c) shift 2 ;;' '  --mpi=* | --cpus-per-task=*) shift ;;' '  *) rest=("$@"); break ;;' 'esac; done' \
    'echo "srun -n $n" >> "$(dirname "$0")/calls"' \
    "exec $(quoted "$mpiexec") --oversubscribe -np \"\$n\" \"\${rest[@]}\"" > shim/srun
  chmod +x shim/srun
  outcome srun env PATH="$work/shim:$PATH" "$run" --processes 3 srun -N 1 --ntasks=4 --mpi=pmix "$fakeapp"
  [ "$rc" = 0 ] || { cat srun.err; fail "srun: exit status $rc"; }
  expect_eq "srun: the launches" "$(cat shim/calls)" "srun -n 4
srun -n 3"
  json_check scorep_fakeapp_4_trace/cpreplay.json 's["ranks"] == 4 and s["processes"]["count"] == 3'
  # srun passes the environment on by itself: no -x.
  grep -qxF "cpreplay-run: measuring: $(quoted env SCOREP_ENABLE_PROFILING=false SCOREP_ENABLE_TRACING=true \
    SCOREP_EXPERIMENT_DIRECTORY=scorep_fakeapp_4_trace srun -N 1 --ntasks=4 --mpi=pmix "$fakeapp")" srun.err ||
    { cat srun.err; fail "srun: the measuring line"; }
  ;;

# ---- an existing experiment is refused; --force moves it aside ------------------------------
refusal)
  exp=scorep_fakeapp_2_trace
  mkdir $exp
  echo old > $exp/traces.otf2
  refused "existing experiment" 2 \
    "cpreplay-run: error: the experiment directory $exp exists; remove it, name another with SCOREP_EXPERIMENT_DIRECTORY, or pass --force to move it aside" \
    "$run" "$mpiexec" "${launcher[@]}" -np 2 "$fakeapp"
  expect_eq "the old experiment after the refusal" "$(find $exp | LC_ALL=C sort)" \
    "$(printf '%s\n' $exp $exp/traces.otf2)"
  expect_eq "its anchor" "$(cat $exp/traces.otf2)" old
  # A file of that name is refused the same way.
  SCOREP_EXPERIMENT_DIRECTORY=plain-file
  export SCOREP_EXPERIMENT_DIRECTORY
  echo data > plain-file
  refused "existing file as the experiment" 2 \
    "cpreplay-run: error: the experiment directory plain-file exists; remove it, name another with SCOREP_EXPERIMENT_DIRECTORY, or pass --force to move it aside" \
    "$run" "$mpiexec" "${launcher[@]}" -np 2 "$fakeapp"
  unset SCOREP_EXPERIMENT_DIRECTORY

  outcome force "$run" --force -q "$mpiexec" "${launcher[@]}" -np 2 "$fakeapp"
  [ "$rc" = 0 ] || { cat force.err; fail "--force: exit status $rc"; }
  aside=$(ls -d $exp.old-*)
  [[ $aside =~ ^$exp\.old-[0-9]{8}_[0-9]{6}$ ]] || fail "--force: moved to [$aside]"
  expect_eq "--force: the old experiment, moved" "$(cat "$aside/traces.otf2")" old
  json_check $exp/cpreplay.json 's["ranks"] == 2 and s["events"] == 28'
  json_check $exp/cpreplay.json 'abs(s["wait_states"][0]["seconds"] - 0.1) < 1e-9'
  ;;

# ---- the application fails, writes no trace, or a profile only -----------------------------
failures)
  exp=scorep_fakeapp_3_trace
  command=("$run" -q "$mpiexec" "${launcher[@]}" -np 3 "$fakeapp")
  analysis=("$mpiexec" "${launcher[@]}" -np 3 "$cpreplay")

  FAKEAPP_FAIL=3 FAKEAPP_PARTIAL=1 outcome partial "${command[@]}"
  expect_eq "failed with a trace: exit status" "$rc" 1
  expect_eq "failed with a trace: error" "$last" \
    "cpreplay-run: error: the application failed (exit status 3); its trace in $exp may be partial: analyze it with $(quoted "${analysis[@]}" --partial -o $exp/cpreplay.cubex --json $exp/cpreplay.json -q $exp/traces.otf2)"
  [ ! -e $exp/cpreplay.cubex ] || fail "failed with a trace: a report without --partial"
  # The command it names works (the last rank stops halfway: in the barrier).
  "${analysis[@]}" --partial -q -o $exp/cpreplay.cubex --json $exp/cpreplay.json $exp/traces.otf2 \
    > named.out 2>&1 || { cat named.out; fail "the command the error line names"; }
  json_check $exp/cpreplay.json 's["ranks"] == 3'
  mv $exp failed-partial

  # With --partial the partial trace is analyzed at once; the status stays 1.
  FAKEAPP_FAIL=3 FAKEAPP_PARTIAL=1 outcome with-partial "$run" --partial "${command[@]:1}"
  expect_eq "--partial: exit status" "$rc" 1
  expect_eq "--partial: no error line" "$(grep -c '^cpreplay-run: error' with-partial.err || true)" 0
  json_check $exp/cpreplay.json 's["ranks"] == 3'
  rm -r $exp

  # Without -q, the note says that the partial trace is analyzed.
  FAKEAPP_FAIL=3 FAKEAPP_PARTIAL=1 outcome note "$run" --partial "$mpiexec" "${launcher[@]}" -np 3 "$fakeapp"
  expect_eq "--partial: exit status without -q" "$rc" 1
  grep -qxF "cpreplay-run: the application failed (exit status 3); analyzing the partial trace in $exp (--partial)" note.err ||
    { cat note.err; fail "--partial: no note"; }
  rm -r $exp

  FAKEAPP_FAIL=7 FAKEAPP_NO_TRACE=1 outcome failed "${command[@]}"
  expect_eq "failed without a trace: exit status" "$rc" 1
  expect_eq "failed without a trace: error" "$last" \
    "cpreplay-run: error: the application failed (exit status 7) and wrote no trace (no $exp/traces.otf2)"

  FAKEAPP_NO_TRACE=1 outcome no-trace "${command[@]}"
  expect_eq "no Score-P: exit status" "$rc" 1
  expect_eq "no Score-P: stderr" "$(cat no-trace.err)" \
    "cpreplay-run: error: the application wrote no trace (no $exp/traces.otf2): was it built with Score-P? Build it with the scorep compiler wrapper (e.g. scorep mpicc -o app app.c) and run cpreplay-run again"
  [ ! -e $exp ] || fail "no Score-P: $exp exists"

  FAKEAPP_PROFILE_ONLY=1 outcome profile "${command[@]}"
  expect_eq "profile only: exit status" "$rc" 1
  expect_eq "profile only: stderr" "$(cat profile.err)" \
    "cpreplay-run: error: Score-P wrote a profile only ($exp/profile.cubex), no trace: tracing was off in the measurement ($exp/scorep.cfg has the settings it used)"
  rm -r $exp

  # The analysis fails (a region the trace does not have): cpreplay's line, then ours.
  outcome analysis "$run" -q --what-if no_such_region=0 "$mpiexec" "${launcher[@]}" -np 3 "$fakeapp"
  expect_eq "failed analysis: exit status" "$rc" 1
  expect_eq "failed analysis: error" "$last" \
    "cpreplay-run: error: the analysis of $exp/traces.otf2 failed (exit status 2; cpreplay's error is above)"
  grep -q "^cpreplay: error: .*no_such_region" analysis.err || { cat analysis.err; fail "no cpreplay error line"; }
  [ -f $exp/traces.otf2 ] || fail "failed analysis: the trace is gone"
  [ ! -e $exp/cpreplay.cubex ] || fail "failed analysis: a report"
  ;;

*) fail "unknown case $case_name" ;;
esac
echo "cpreplay-run $case_name: OK"
