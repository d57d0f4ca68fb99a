#!/usr/bin/env bash
# Configures and builds cpreplay into ./build (two parallel jobs: the machines have 2 cores).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCPREPLAY_TESTS=ON > build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j 2 >> build.log 2>&1 || { tail -n 60 build.log; exit 1; }
