#!/usr/bin/env bash
# Installs, builds and runs the whole test suite (unit, MPI integration, conformance), then the
# unit, MPI and end-to-end tests again under ASan and UBSan, and with clang the fuzz smoke tests
# (scripts/test-sanitized.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install-deps.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j 2 --timeout 600)
bash scripts/test-sanitized.sh
