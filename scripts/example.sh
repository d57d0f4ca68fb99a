#!/usr/bin/env bash
# Installs, builds, writes the bundled 4-rank example trace and analyzes it with cpreplay.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
./build/tests/cpreplay-mktrace example out/example
mpirun --oversubscribe -np 4 ./build/cpreplay out/example/traces.otf2
