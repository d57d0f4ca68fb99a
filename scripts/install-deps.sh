#!/usr/bin/env bash
# Installs everything cpreplay needs to build and test, from Debian's packages (run as root).
set -euo pipefail
packages=(openmpi-bin libopenmpi-dev libotf2-trace-dev otf2-tools libboost-program-options-dev
          libgtest-dev zlib1g-dev cmake g++ make
          lmod man-db)  # the installed-tree test loads the module file and looks up the man page
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
