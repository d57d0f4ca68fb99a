#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (unit, MPI integration, conformance).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
cd build
ctest --output-on-failure -j 2 --timeout 600
