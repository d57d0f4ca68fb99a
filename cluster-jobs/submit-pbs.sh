#!/bin/bash
# Submits cpreplay.pbs with as many MPI processes as the experiment's trace has ranks.
# usage: submit-pbs.sh EXPERIMENT_DIR [RANKS_PER_NODE]
set -euo pipefail
experiment=${1:?usage: submit-pbs.sh EXPERIMENT_DIR [RANKS_PER_NODE]}
per_node=${2:-32}
here=$(cd "$(dirname "$0")" && pwd)
ranks=$("${CPREPLAY:-cpreplay}" --count-ranks "$experiment/traces.otf2")
nodes=$(( (ranks + per_node - 1) / per_node ))
on_node=$(( ranks < per_node ? ranks : per_node ))
exec qsub -l "select=$nodes:ncpus=$on_node:mpiprocs=$on_node" -v "EXPERIMENT=$experiment" \
  "$here/cpreplay.pbs"
