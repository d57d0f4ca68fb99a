#!/bin/bash
# Submits cpreplay.slurm with as many tasks as the experiment's trace has MPI ranks.
# usage: submit-slurm.sh EXPERIMENT_DIR [cpreplay options]
set -euo pipefail
experiment=${1:?usage: submit-slurm.sh EXPERIMENT_DIR [cpreplay options]}
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

ranks=$("$cpreplay" --count-ranks "$experiment/traces.otf2")
run sbatch --ntasks="$ranks" "$here/cpreplay.slurm" "$@"
