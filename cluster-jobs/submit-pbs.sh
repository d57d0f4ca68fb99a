#!/bin/bash
# Submits cpreplay.pbs with as many MPI processes as the experiment's trace has ranks.
# usage: submit-pbs.sh EXPERIMENT_DIR [RANKS_PER_NODE]
set -euo pipefail
experiment=${1:?usage: submit-pbs.sh EXPERIMENT_DIR [RANKS_PER_NODE]}
per_node=${2:-32}
here=$(cd "$(dirname "$0")" && pwd)
# The cpreplay to run: $CPREPLAY if set, else the one installed with this script (cmake --install
# fills in the next line; an absolute path, so it also holds where the batch system runs a copy of
# the script), else the first cpreplay on PATH (e.g. after `module load cpreplay`).
installed_cpreplay=
[ -z "$installed_cpreplay" ] || [ -x "$installed_cpreplay" ] || installed_cpreplay=
cpreplay=${CPREPLAY:-${installed_cpreplay:-cpreplay}}

# CPREPLAY_DRY_RUN=1 prints the qsub command instead of running it: the rank count is still read
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
nodes=$(( (ranks + per_node - 1) / per_node ))
on_node=$(( ranks < per_node ? ranks : per_node ))
run qsub -l "select=$nodes:ncpus=$on_node:mpiprocs=$on_node" -v "EXPERIMENT=$experiment" \
  "$here/cpreplay.pbs"
