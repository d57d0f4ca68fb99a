#!/usr/bin/env bash
# Installs everything cpreplay needs to build and test, from Debian's packages (run as root).
# usage: install-deps.sh [--with-browser] [--with-bench]
#   --with-browser: also Chromium, for the test that opens the --overview SVG in a real browser,
#   and npm with speedscope (in ~/.cache/cpreplay/speedscope, outside the source tree), for the
#   test that opens the --timeline of ../shared/real in it (both skip without them; Chromium is
#   large, so the default set-up leaves it out).
#   --with-bench: also what bench/ uses beyond the build: Debian's python3-otf2 (simtrace.py's
#   traces) and valgrind (bench/instructions.sh). The test suite needs neither.
set -euo pipefail
packages=(openmpi-bin libopenmpi-dev libotf2-trace-dev otf2-tools libboost-program-options-dev
          libgtest-dev zlib1g-dev cmake g++ make python3
          lmod man-db   # the installed-tree test loads the module file and looks up the man page
          clang libclang-rt-dev)  # the fuzz targets: clang's libFuzzer (scripts/test-sanitized.sh)
for arg in "$@"; do
  case "$arg" in
    --with-browser) packages+=(chromium npm); viewer=1 ;;
    --with-bench) packages+=(python3-otf2 valgrind) ;;
    *) echo "usage: install-deps.sh [--with-browser] [--with-bench]" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
if [ "${viewer:-0}" = 1 ] && [ ! -f "$HOME/.cache/cpreplay/speedscope/node_modules/speedscope/dist/release/index.html" ]; then
  npm install --no-audit --no-fund --prefix "$HOME/.cache/cpreplay/speedscope" speedscope@1.25.0
fi
