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

script=submit-slurm.sh
. "$here/submit-common.sh"
size_job "$experiment" "$processes"
# The job asks for 2 GB per task (cpreplay.slurm); more only when a task needs it.
memory=()
[ "$mb" -le 2048 ] || memory=(--mem-per-cpu="${mb}M")
run sbatch --ntasks="$processes" ${memory[@]+"${memory[@]}"} "$here/cpreplay.slurm" "$@"
