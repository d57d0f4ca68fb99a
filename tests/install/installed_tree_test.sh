#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Installs the build into a temporary prefix and uses only that, as a cluster user would: the
# file layout, the installed binary on the example trace, the module file through Lmod (version,
# man page, PATH and MANPATH kept free of duplicates; cpreplay-run found on PATH and run with
# fakeapp), and the job scripts in dry-run mode.
#
# usage: installed_tree_test.sh BUILD_DIR SOURCE_DIR BUILT_CPREPLAY MKTRACE MPIEXEC PYTHON WORK_DIR
#                               VERSION OTF2_VERSION MPI_STANDARD FAKEAPP
set -euo pipefail
build=$1 source=$2 built=$3 mktrace=$4 mpiexec=$5 python=$6 work=$7 version=$8 otf2_version=$9
mpi_standard=${10} fakeapp=${11}

fail() { echo "FAIL: $*" >&2; exit 1; }
# expect_eq WHAT ACTUAL EXPECTED
expect_eq() { [ "$2" == "$3" ] || fail "$1: got [$2], expected [$3]"; }
# The words of a command as the job scripts' dry-run mode prints them (printf %q, one space).
quoted() { local line; printf -v line '%q ' "$@"; echo "${line% }"; }

rm -rf "$work"
mkdir -p "$work"
# A space in the prefix: every path the install writes into a script or module file must hold it.
prefix="$work/opt/cpreplay with space/$version"

# --- 1. cmake --install ---------------------------------------------------------------------
cmake --install "$build" --prefix "$prefix" > "$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install into $prefix failed"; }

listing=$(cd "$prefix" && find . \( -type f -o -type l \) | LC_ALL=C sort)
expected_listing="./bin/cpreplay
./bin/cpreplay-run
./share/cpreplay/cluster-jobs/README.md
./share/cpreplay/cluster-jobs/cpreplay-run.pbs
./share/cpreplay/cluster-jobs/cpreplay-run.slurm
./share/cpreplay/cluster-jobs/cpreplay.pbs
./share/cpreplay/cluster-jobs/cpreplay.slurm
./share/cpreplay/cluster-jobs/submit-common.sh
./share/cpreplay/cluster-jobs/submit-pbs.sh
./share/cpreplay/cluster-jobs/submit-slurm.sh
./share/doc/cpreplay/README.md
./share/doc/cpreplay/json-schema.md
./share/man/man1/cpreplay-run.1
./share/man/man1/cpreplay.1
./share/modulefiles/cpreplay/$version"
expect_eq "installed files" "$listing" "$expected_listing"
for f in bin/cpreplay bin/cpreplay-run \
         share/cpreplay/cluster-jobs/{cpreplay.pbs,cpreplay.slurm,submit-pbs.sh,submit-slurm.sh} \
         share/cpreplay/cluster-jobs/{cpreplay-run.pbs,cpreplay-run.slurm}; do
  [ -x "$prefix/$f" ] || fail "$f is not executable"
done
cmp -s "$source/docs/cpreplay.1" "$prefix/share/man/man1/cpreplay.1" || fail "man page differs"
cmp -s "$source/docs/cpreplay-run.1" "$prefix/share/man/man1/cpreplay-run.1" ||
  fail "cpreplay-run's man page differs"
cmp -s "$source/tools/cpreplay-run" "$prefix/bin/cpreplay-run" || fail "bin/cpreplay-run differs"
cmp -s "$source/docs/json-schema.md" "$prefix/share/doc/cpreplay/json-schema.md" ||
  fail "json-schema.md differs"
# The installed binary must not need the build tree (RUNPATH/RPATH pointing into it).
if readelf -d "$prefix/bin/cpreplay" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
  fail "bin/cpreplay's RUNPATH points into the build tree: $(readelf -d "$prefix/bin/cpreplay" | grep -E 'R(UN)?PATH')"
fi

# Every option `cpreplay --help` lists has an entry in the man page, and the other way round.
help_options=$("$prefix/bin/cpreplay" --help | grep -oE '^  (-[a-z] \[ )?--[a-z-]+' |
               grep -oE -- '--[a-z-]+' | LC_ALL=C sort -u)
# The man page's option entries: the tag line after each .TP in OPTIONS (roff writes - as \-).
man_options=$(awk '/^\.SH /{opts = ($2 == "OPTIONS")} opts && tag {print; tag = 0}
                   opts && /^\.TP/{tag = 1}' "$prefix/share/man/man1/cpreplay.1" |
              grep -oE '\\-\\-[a-z\\-]+' | sed 's/\\-/-/g' | LC_ALL=C sort -u)
expect_eq "options in --help vs. man page" "$man_options" "$help_options"

# A clean environment: nothing from the build tree on PATH, and no cpreplay at all.
export PATH=/usr/local/bin:/usr/bin:/bin
unset CPREPLAY CPREPLAY_DRY_RUN MANPATH LOADEDMODULES _LMFILES_ MODULEPATH
! command -v cpreplay > /dev/null || fail "a cpreplay is on PATH before the module is loaded"
! command -v cpreplay-run > /dev/null || fail "a cpreplay-run is on PATH before the module is loaded"

# --- 2. the installed binary on the example trace ----------------------------------------
"$mktrace" example "$work/example" > /dev/null
"$mpiexec" --oversubscribe -np 4 "$prefix/bin/cpreplay" -q -o "$work/example/run.cubex" \
  --json "$work/example/run.json" "$work/example/traces.otf2" > "$work/run.out" 2>&1 ||
  { cat "$work/run.out"; fail "installed cpreplay failed on the example trace"; }
# The same run with the build tree's binary: the installed one must agree to the last digit.
"$mpiexec" --oversubscribe -np 4 "$built" -q -o "$work/example/built.cubex" \
  --json "$work/example/built.json" "$work/example/traces.otf2" > "$work/built.out" 2>&1 ||
  { cat "$work/built.out"; fail "the build tree's cpreplay failed on the example trace"; }
# The example (tests/support/mktrace.cpp) has 4 ranks of 168 events: ProgramBegin/End, Enter and
# Leave of main, MPI_Init and MPI_Finalize (8), and 10 iterations of compute (2), MPI_Send and
# MPI_Recv (3 each: Enter, the message event, Leave), MPI_Allreduce and MPI_Barrier (4 each:
# Enter, CollectiveBegin/End, Leave).
"$python" - "$work/example" "$version" <<'EOF' || fail "the installed binary's report"
import io, json, sys, tarfile, xml.etree.ElementTree as ET
example, version = sys.argv[1], sys.argv[2]
installed = json.load(open(example + "/run.json"))
built = json.load(open(example + "/built.json"))
assert installed["schema"] == "cpreplay-summary/1", installed["schema"]
assert installed["ranks"] == 4, installed["ranks"]
assert installed["events"] == 4 * (8 + 10 * (2 + 3 + 3 + 4 + 4)) == 672, installed["events"]
assert [w["metric"] for w in installed["wait_states"]] == ["mpi_wait_nxn", "mpi_latesender"], \
    installed["wait_states"]
for key in ("trace", "report", "analysis_s"):  # paths and the run's own duration differ
    installed.pop(key), built.pop(key)
assert installed == built, "installed and built binaries disagree"
for report in ("run", "built"):
    with tarfile.open(f"{example}/{report}.cubex") as cubex:
        anchor = ET.parse(io.BytesIO(cubex.extractfile("anchor.xml").read())).getroot()
    creator = [a.get("value") for a in anchor.findall("attr") if a.get("key") == "Creator"]
    assert creator == ["cpreplay " + version], (report, creator)
EOF

# --- 3. the module file through Lmod (and Environment Modules) -----------------------------------------------------
lmod_init=${LMOD_INIT:-/usr/share/lmod/lmod/init/bash}
[ -r "$lmod_init" ] || fail "Lmod is not installed ($lmod_init; Debian package lmod)"
expected_version="cpreplay $version"
if git -C "$source" rev-parse --show-toplevel > /dev/null 2>&1; then
  expected_version+=$'\n'"git revision $(git -C "$source" rev-parse --short=12 HEAD)"
  if [ -n "$(git -C "$source" status --porcelain --untracked-files=no)" ]; then
    expected_version+=" (with uncommitted changes)"
  fi
fi
expected_version+=$'\n'"built with OTF2 $otf2_version"
mpi_line=$("$mpiexec" --version 2>/dev/null | head -n 1 || true)
if [[ $mpi_line =~ ^mpirun\ \(Open\ MPI\)\ ([0-9.]+)$ ]]; then
  expected_version+=$'\n'"built with Open MPI ${BASH_REMATCH[1]} (MPI $mpi_standard)"
else
  expected_version=""  # another MPI: only the first lines are compared below
fi

count_in() {  # count_in LIST ENTRY: how often ENTRY is an element of the colon-separated LIST
  local IFS=: n=0 e
  for e in $1; do [ "$e" == "$2" ] && n=$((n + 1)); done
  echo "$n"
}

# Lmod 8.6 (tcl2lua) cannot read a Tcl module file whose path holds a space, so the module
# systems get an install of their own in a prefix without one; the rest uses the one with it.
tree_prefix=$prefix
prefix="$work/opt/cpreplay/$version"
cmake --install "$build" --prefix "$prefix" > "$work/install-modules.log" 2>&1 ||
  { cat "$work/install-modules.log"; fail "cmake --install into $prefix failed"; }

# check_module_file SYSTEM: the checks, through the `module` command the caller defined.
check_module_file() {
  module use "$prefix/share/modulefiles"
  module load cpreplay 2> "$work/module.err" || { cat "$work/module.err"; fail "$1: module load"; }
  if grep -qvE '^(Loading|$)' "$work/module.err"; then
    cat "$work/module.err"; fail "$1: module load printed errors"
  fi
  expect_eq "$1: cpreplay on PATH after module load" "$(command -v cpreplay)" "$prefix/bin/cpreplay"
  got_version=$(cpreplay --version)
  if [ -n "$expected_version" ]; then
    expect_eq "$1: cpreplay --version" "$got_version" "$expected_version"
  else
    expect_eq "$1: cpreplay --version, first line" "$(head -n 1 <<< "$got_version")" \
      "cpreplay $version"
  fi
  expect_eq "$1: man -w cpreplay" "$(man -w cpreplay)" "$prefix/share/man/man1/cpreplay.1"
  # cpreplay-run beside it, with its man page; it runs the installed cpreplay.
  expect_eq "$1: cpreplay-run on PATH after module load" "$(command -v cpreplay-run)" \
    "$prefix/bin/cpreplay-run"
  [[ $(cpreplay-run --help) == "Usage: cpreplay-run [options] LAUNCHER"* ]] ||
    fail "$1: cpreplay-run --help"
  expect_eq "$1: cpreplay-run --version" "$(cpreplay-run --version)" "$got_version"
  expect_eq "$1: man -w cpreplay-run" "$(man -w cpreplay-run)" "$prefix/share/man/man1/cpreplay-run.1"
  expect_eq "$1: cpreplay-run's analysis command" \
    "$(cd "$work" && cpreplay-run --dry-run "$mpiexec" -np 4 "$fakeapp" | tail -n 1)" \
    "$(quoted "$mpiexec" -np 4 "$prefix/bin/cpreplay" -o scorep_fakeapp_4_trace/cpreplay.cubex \
         --json scorep_fakeapp_4_trace/cpreplay.json scorep_fakeapp_4_trace/traces.otf2)"
  # Prepending to an unset MANPATH must not hide the system's pages.
  if [ -e /usr/share/man/man1/ls.1.gz ]; then
    expect_eq "$1: man -w ls with the module loaded" "$(man -w ls)" /usr/share/man/man1/ls.1.gz
  fi
  expect_eq "$1: CPREPLAY_ROOT" "${CPREPLAY_ROOT:-}" "$prefix"

  # Loaded again, also by its full name: still one entry each.
  module load cpreplay 2> /dev/null
  module load "cpreplay/$version" 2> /dev/null
  expect_eq "$1: PATH entries for the prefix after three loads" \
    "$(count_in "$PATH" "$prefix/bin")" 1
  expect_eq "$1: MANPATH entries for the prefix after three loads" \
    "$(count_in "$MANPATH" "$prefix/share/man")" 1
  module unload cpreplay 2> /dev/null
  expect_eq "$1: PATH entries after unload" "$(count_in "$PATH" "$prefix/bin")" 0
  expect_eq "$1: MANPATH entries after unload" "$(count_in "${MANPATH:-}" "$prefix/share/man")" 0
  ! command -v cpreplay > /dev/null || fail "$1: cpreplay still on PATH after module unload"
  ! command -v cpreplay-run > /dev/null || fail "$1: cpreplay-run still on PATH after module unload"

  # Already on PATH (a user's own export) before the load: no second entry, and the unload
  # leaves the user's own.
  PATH="$prefix/bin:$PATH"
  module load cpreplay 2> /dev/null
  expect_eq "$1: PATH entries when PATH had it already" "$(count_in "$PATH" "$prefix/bin")" 1
  module unload cpreplay 2> /dev/null
  expect_eq "$1: PATH entries after unload when PATH had it" "$(count_in "$PATH" "$prefix/bin")" 1
}

# Lmod (Debian's lmod package: scripts/install-deps.sh installs it).
# shellcheck disable=SC1090
( source "$lmod_init" && check_module_file Lmod )
# Environment Modules, where its modulecmd.tcl is at hand (Debian's package conflicts with
# lmod, so it is not installed beside it; CPREPLAY_TEST_MODULECMD can name an unpacked copy).
modulecmd=${CPREPLAY_TEST_MODULECMD:-}
for m in /usr/lib/x86_64-linux-gnu/modulecmd.tcl /usr/share/modules/libexec/modulecmd.tcl; do
  [ -n "$modulecmd" ] || [ ! -r "$m" ] || modulecmd=$m
done
if [ -n "$modulecmd" ]; then
  ( module() { eval "$(tclsh "$modulecmd" bash "$@")"; }; check_module_file "Environment Modules" )
  module_systems="Lmod and Environment Modules"
else
  module_systems="Lmod (no Environment Modules here)"
fi

prefix=$tree_prefix
# --- 4. the job scripts from the install, dry-run -----------------------------------------
jobs="$prefix/share/cpreplay/cluster-jobs"
cd "$work"
export CPREPLAY_DRY_RUN=1

out=$(SLURM_NTASKS=4 bash "$jobs/cpreplay.slurm" example -q)
expect_eq "cpreplay.slurm dry run" "$out" "$(quoted srun "$prefix/bin/cpreplay" -o example/cpreplay.cubex \
  --json example/cpreplay.json -q example/traces.otf2)"
# Slurm runs a copy of the job script from its spool directory: the binary is still found.
mkdir -p spool && cp "$jobs/cpreplay.slurm" spool/slurm_script
out=$(SLURM_NTASKS=4 bash spool/slurm_script example)
expect_eq "spooled cpreplay.slurm dry run" "$out" "$(quoted srun "$prefix/bin/cpreplay" \
  -o example/cpreplay.cubex --json example/cpreplay.json example/traces.otf2)"
# Fewer tasks than ranks are fine (each analyzes a block of ranks).
out=$(SLURM_NTASKS=3 bash "$jobs/cpreplay.slurm" example)
expect_eq "cpreplay.slurm with 3 tasks" "$out" "$(quoted srun "$prefix/bin/cpreplay" \
  -o example/cpreplay.cubex --json example/cpreplay.json example/traces.otf2)"
# More tasks than ranks, or none, are refused with the rank count named, before srun.
for tasks in 5 0 ""; do
  set +e
  out=$(SLURM_NTASKS=$tasks bash "$jobs/cpreplay.slurm" example 2>&1)
  rc=$?
  set -e
  expect_eq "cpreplay.slurm with ${tasks:-no} tasks: exit code" "$rc" 2
  expect_eq "cpreplay.slurm with ${tasks:-no} tasks: message" "$out" "cpreplay.slurm: example/traces.otf2 has 4 MPI ranks but the job has ${tasks:-no} tasks; submit with --ntasks from 1 to 4"
done

out=$(bash "$jobs/submit-slurm.sh" example -q 2>/dev/null)
expect_eq "submit-slurm.sh dry run" "$out" "$(quoted sbatch --ntasks=4 "$jobs/cpreplay.slurm" example -q)"
# A process count, and the sizing it prints (672 events; 2 of the 4 ranks on each process).
out=$(bash "$jobs/submit-slurm.sh" -n 2 example -q 2>"$work/sizing.err")
expect_eq "submit-slurm.sh -n 2 dry run" "$out" "$(quoted sbatch --ntasks=2 "$jobs/cpreplay.slurm" example -q)"
expect_eq "submit-slurm.sh -n 2 sizing" "$(cat "$work/sizing.err")" "submit-slurm.sh: example/traces.otf2: 4 ranks, 672 events; 2 processes of up to 2 ranks (336 events) need about 22 MB each"
for bad in 0 5 x 08; do
  set +e
  out=$(bash "$jobs/submit-slurm.sh" -n "$bad" example 2>&1)
  rc=$?
  set -e
  expect_eq "submit-slurm.sh -n $bad: exit code" "$rc" 2
  expect_eq "submit-slurm.sh -n $bad: message" "$out" "submit-slurm.sh: -n must be a whole number of processes from 1 to 4 (the MPI ranks of example/traces.otf2), not '$bad'"
done
out=$(bash "$jobs/submit-pbs.sh" example 3 2>/dev/null)
expect_eq "submit-pbs.sh dry run" "$out" "$(quoted qsub -l select=2:ncpus=3:mpiprocs=3 \
  -v EXPERIMENT=example "$jobs/cpreplay.pbs")"
out=$(bash "$jobs/submit-pbs.sh" -n 3 example 2 2>/dev/null)
expect_eq "submit-pbs.sh -n 3 dry run" "$out" "$(quoted qsub -l select=2:ncpus=2:mpiprocs=2 \
  -v EXPERIMENT=example,PROCESSES=3 "$jobs/cpreplay.pbs")"
out=$(EXPERIMENT=example PBS_O_WORKDIR="$work" bash "$jobs/cpreplay.pbs")
expect_eq "cpreplay.pbs dry run" "$out" "$(quoted mpirun -np 4 "$prefix/bin/cpreplay" \
  -o example/cpreplay.cubex --json example/cpreplay.json example/traces.otf2)"
out=$(EXPERIMENT=example PROCESSES=3 PBS_O_WORKDIR="$work" bash "$jobs/cpreplay.pbs")
expect_eq "cpreplay.pbs PROCESSES=3 dry run" "$out" "$(quoted mpirun -np 3 "$prefix/bin/cpreplay" \
  -o example/cpreplay.cubex --json example/cpreplay.json example/traces.otf2)"
set +e
out=$(EXPERIMENT=example PROCESSES=9 PBS_O_WORKDIR="$work" bash "$jobs/cpreplay.pbs" 2>&1)
rc=$?
set -e
expect_eq "cpreplay.pbs PROCESSES=9: exit code" "$rc" 2
expect_eq "cpreplay.pbs PROCESSES=9: message" "$out" "cpreplay.pbs: example/traces.otf2 has 4 MPI ranks; PROCESSES must be from 1 to 4, not '9'"

# The PBS job for real (its launcher is plain mpirun): the installed binary writes both files,
# here with 3 processes for the 4 ranks.
unset CPREPLAY_DRY_RUN
PATH="$(dirname "$mpiexec"):$PATH" EXPERIMENT=example PROCESSES=3 PBS_O_WORKDIR="$work" \
  OMPI_MCA_rmaps_base_oversubscribe=1 CPREPLAY_OPTIONS=-q bash "$jobs/cpreplay.pbs" > pbs.out 2>&1 ||
  { cat pbs.out; fail "cpreplay.pbs run"; }
"$python" -c 'import json, sys; s = json.load(open(sys.argv[1])); assert (s["ranks"], s["events"], s["processes"]["count"]) == (4, 672, 3), s' \
  example/cpreplay.json || fail "cpreplay.pbs: example/cpreplay.json"
[ -s example/cpreplay.cubex ] || fail "cpreplay.pbs wrote no example/cpreplay.cubex"

# --- 5. the jobs that measure and analyze in one allocation (cpreplay-run) ------------------
export CPREPLAY_DRY_RUN=1
experiment=scorep_fakeapp_4_trace
out=$(SLURM_NTASKS=4 bash "$jobs/cpreplay-run.slurm" "$fakeapp" a b)
expect_eq "cpreplay-run.slurm dry run" "$out" "$(quoted env SCOREP_ENABLE_PROFILING=false \
  SCOREP_ENABLE_TRACING=true SCOREP_EXPERIMENT_DIRECTORY=$experiment srun --ntasks=4 "$fakeapp" a b)
$(quoted srun --ntasks=4 "$prefix/bin/cpreplay" -o $experiment/cpreplay.cubex \
  --json $experiment/cpreplay.json $experiment/traces.otf2)"
# A copy in Slurm's spool directory still runs the installed cpreplay-run; options and threads.
cp "$jobs/cpreplay-run.slurm" spool/slurm_script
out=$(SLURM_NTASKS=4 SLURM_CPUS_PER_TASK=2 OMP_NUM_THREADS=2 CPREPLAY_RUN_OPTIONS="--processes 2 -q" \
      bash spool/slurm_script "$fakeapp")
expect_eq "spooled cpreplay-run.slurm dry run" "$out" "$(quoted env SCOREP_ENABLE_PROFILING=false \
  SCOREP_ENABLE_TRACING=true SCOREP_EXPERIMENT_DIRECTORY=scorep_fakeapp_4x2_trace srun --ntasks=4 \
  --cpus-per-task=2 "$fakeapp")
$(quoted srun --ntasks=2 --cpus-per-task=2 "$prefix/bin/cpreplay" \
  -o scorep_fakeapp_4x2_trace/cpreplay.cubex --json scorep_fakeapp_4x2_trace/cpreplay.json -q \
  scorep_fakeapp_4x2_trace/traces.otf2)"
set +e
out=$(bash "$jobs/cpreplay-run.slurm" "$fakeapp" 2>&1)
rc=$?
set -e
expect_eq "cpreplay-run.slurm without tasks: exit code" "$rc" 2
expect_eq "cpreplay-run.slurm without tasks: message" "$out" \
  "cpreplay-run.slurm: the job has no tasks; submit with --ntasks=N"

out=$(APP="$fakeapp" APP_ARGS="a b" NP=4 PROCESSES=3 PBS_O_WORKDIR="$work" PATH="$(dirname "$mpiexec"):$PATH" \
      bash "$jobs/cpreplay-run.pbs")
expect_eq "cpreplay-run.pbs dry run, analysis" "$(tail -n 1 <<< "$out")" "$(quoted mpirun -np 3 \
  "$prefix/bin/cpreplay" -o $experiment/cpreplay.cubex --json $experiment/cpreplay.json \
  $experiment/traces.otf2)"
[[ $(head -n 1 <<< "$out") == "env "*" SCOREP_EXPERIMENT_DIRECTORY=$experiment mpirun "*" -np 4 $(quoted "$fakeapp" a b)" ]] ||
  fail "cpreplay-run.pbs dry run, measurement: $(head -n 1 <<< "$out")"
printf '%s\n' n1 n1 n2 > nodefile
out=$(APP="$fakeapp" PBS_NODEFILE=nodefile PBS_O_WORKDIR="$work" PATH="$(dirname "$mpiexec"):$PATH" \
      bash "$jobs/cpreplay-run.pbs")
expect_eq "cpreplay-run.pbs with a node file of 3 slots" "$(tail -n 1 <<< "$out")" \
  "$(quoted mpirun -np 3 "$prefix/bin/cpreplay" -o scorep_fakeapp_3_trace/cpreplay.cubex \
     --json scorep_fakeapp_3_trace/cpreplay.json scorep_fakeapp_3_trace/traces.otf2)"
set +e
out=$(APP="$fakeapp" NP=0 PBS_O_WORKDIR="$work" bash "$jobs/cpreplay-run.pbs" 2>&1)
rc=$?
set -e
expect_eq "cpreplay-run.pbs NP=0: exit code" "$rc" 2
expect_eq "cpreplay-run.pbs NP=0: message" "$out" "cpreplay-run.pbs: NP must be a whole number of processes from 1, not '0' (pass it with -v NP=N, or run as a PBS job with a node file)"

# The PBS job for real: fakeapp measured on 4 processes, analyzed on 3, by the installed tools.
unset CPREPLAY_DRY_RUN
PATH="$(dirname "$mpiexec"):$PATH" APP="$fakeapp" NP=4 PROCESSES=3 PBS_O_WORKDIR="$work" \
  OMPI_MCA_rmaps_base_oversubscribe=1 CPREPLAY_RUN_OPTIONS=-q bash "$jobs/cpreplay-run.pbs" \
  > pbs-run.out 2>&1 || { cat pbs-run.out; fail "cpreplay-run.pbs run"; }
"$python" -c 'import json, sys; s = json.load(open(sys.argv[1])); assert (s["ranks"], s["events"], s["processes"]["count"]) == (4, 56, 3), s' \
  $experiment/cpreplay.json || fail "cpreplay-run.pbs: $experiment/cpreplay.json"
[ -s $experiment/cpreplay.cubex ] || fail "cpreplay-run.pbs wrote no $experiment/cpreplay.cubex"
echo "installed tree OK: $prefix; module file checked with $module_systems"
