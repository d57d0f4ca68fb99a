#!/bin/bash
# Submits cpreplay.pbs with as many MPI processes as the experiment's trace has ranks, or with
# PROCESSES (1 to the rank count): each then analyzes a block of ranks. Says how much memory a
# process needs.
# usage: submit-pbs.sh [-n PROCESSES] EXPERIMENT_DIR [PROCESSES_PER_NODE]
set -euo pipefail
usage="usage: submit-pbs.sh [-n PROCESSES] EXPERIMENT_DIR [PROCESSES_PER_NODE]"
processes=""
if [ "${1:-}" = "-n" ]; then
  [ $# -ge 2 ] || { echo "$usage" >&2; exit 2; }
  processes=$2
  shift 2
fi
experiment=${1:?$usage}
per_node=${2:-32}
here=$(cd "$(dirname "$0")" && pwd)
# The cpreplay to run: $CPREPLAY if set, else the one installed with this script (cmake --install
# fills in the next line; an absolute path, so it also holds where the batch system runs a copy of
# the script), else the first cpreplay on PATH (e.g. after `module load cpreplay`).
installed_cpreplay=
[ -z "$installed_cpreplay" ] || [ -x "$installed_cpreplay" ] || installed_cpreplay=
cpreplay=${CPREPLAY:-${installed_cpreplay:-cpreplay}}

script=submit-pbs.sh
. "$here/submit-common.sh"
given=$processes
size_job "$experiment" "$processes"
nodes=$(( (processes + per_node - 1) / per_node ))
on_node=$(( processes < per_node ? processes : per_node ))
variables="EXPERIMENT=$experiment"
[ -z "$given" ] || variables="$variables,PROCESSES=$processes"
run qsub -l "select=$nodes:ncpus=$on_node:mpiprocs=$on_node" -v "$variables" "$here/cpreplay.pbs"
