#!/bin/bash
# Submits cpreplay.slurm with as many tasks as the experiment's trace has MPI ranks.
# usage: submit-slurm.sh EXPERIMENT_DIR [cpreplay options]
set -euo pipefail
experiment=${1:?usage: submit-slurm.sh EXPERIMENT_DIR [cpreplay options]}
here=$(cd "$(dirname "$0")" && pwd)
ranks=$("${CPREPLAY:-cpreplay}" --count-ranks "$experiment/traces.otf2")
exec sbatch --ntasks="$ranks" "$here/cpreplay.slurm" "$@"
