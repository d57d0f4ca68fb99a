#!/bin/bash
# Submits cpreplay.slurm with as many tasks as the experiment's trace has MPI ranks, or with
# PROCESSES tasks (1 to the rank count): each then analyzes a block of ranks. Says how much
# memory a task needs and asks for more than the job's default when that is not enough.
# usage: submit-slurm.sh [-n PROCESSES] EXPERIMENT_DIR [cpreplay options]
set -euo pipefail
usage="usage: submit-slurm.sh [-n PROCESSES] EXPERIMENT_DIR [cpreplay options]"
processes=""
if [ "${1:-}" = "-n" ]; then
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  processes=$2
  shift 2
fi
experiment=${1:?$usage}
here=$(cd "$(dirname "$0")" && pwd)
# The cpreplay to run: $CPREPLAY if set, else the one installed with this script (cmake --install
# fills in the next line; an absolute path, so it also holds where the batch system runs a copy of
# the script), else the first cpreplay on PATH (e.g. after `module load cpreplay`).
installed_cpreplay=
[ -z "$installed_cpreplay" ] || [ -x "$installed_cpreplay" ] || installed_cpreplay=
cpreplay=${CPREPLAY:-${installed_cpreplay:-cpreplay}}

# CPREPLAY_DRY_RUN=1 prints the sbatch command instead of running it: the rank count is still read
# from the trace and checked, so a job can be tried out where there is no batch system.
run() {
  if [ "${CPREPLAY_DRY_RUN:-0}" != 0 ]; then
    local line
    printf -v line '%q ' "$@"
    echo "${line% }"
  else
    "$@"
  fi
}

anchor="$experiment/traces.otf2"
ranks=$("$cpreplay" --count-ranks "$anchor")
events=$("$cpreplay" --count-events "$anchor")
processes=${processes:-$ranks}
case "$processes" in
  '' | *[!0-9]* | 0*) ok=0 ;;
  *) ok=$(( processes <= ranks )) ;;
esac
if [ "$ok" != 1 ]; then
  echo "submit-slurm.sh: -n must be a whole number of processes from 1 to $ranks (the MPI ranks" \
       "of $anchor), not '$processes'" >&2
  exit 2
fi
# Sizing (bench/RESULTS.md): a process needs about 20 MB, plus 30 bytes per event and 25 kB per
# rank of the ranks it holds; the largest holds ceil(ranks / processes) ranks. (Process 0 also
# gathers the report's rows, up to 64 MB more.) The job asks for 2 GB per task.
per_process=$(( (ranks + processes - 1) / processes ))
events_per=$(( (events * per_process + ranks - 1) / ranks ))
mb=$(( 20 + (events_per * 30 + 999999) / 1000000 + (per_process * 25 + 999) / 1000 ))
echo "submit-slurm.sh: $anchor: $ranks ranks, $events events; $processes processes of up to" \
     "$per_process ranks ($events_per events) need about $mb MB each" >&2
memory=()
[ "$mb" -le 2048 ] || memory=(--mem-per-cpu="${mb}M")
run sbatch --ntasks="$processes" ${memory[@]+"${memory[@]}"} "$here/cpreplay.slurm" "$@"
