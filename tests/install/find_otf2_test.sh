#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# OTF2 discovery (cmake/FindOTF2.cmake): each of the three ways finds a fake installation, and
# when none does, configuring fails with one line that names what was searched and the three ways.
#
# usage: find_otf2_test.sh SOURCE_DIR WORK_DIR
# Fake installations are symlinks to the system's OTF2 headers and library (one with a header
# that claims version 2.3); the module runs in a project without compilers (tests/install/find_otf2),
# and once in the real project, which must stop at OTF2 before anything else.
set -euo pipefail
source=$1 work=$2
fail() { echo "FAIL: $*" >&2; exit 1; }

real_include=$(dirname "$(dirname "$(printf '#include <otf2/otf2.h>\n' | c++ -E -x c++ - |
               grep -m1 -oE '"[^"]*/otf2/otf2\.h"' | tr -d '"')")")
real_library=$(c++ -print-file-name=libotf2.so)
[ -e "$real_include/otf2/OTF2_GeneralDefinitions.h" ] || fail "no system OTF2 headers to fake from"
[ -e "$real_library" ] || fail "no system libotf2.so to fake from"
real_version=$(sed -nE 's/^#define OTF2_VERSION +"([^"]*)".*/\1/p' \
               "$real_include/otf2/OTF2_GeneralDefinitions.h")

rm -rf "$work"
mkdir -p "$work"
fake() {  # fake PREFIX: include/otf2 and lib/libotf2.so, as an OTF2 install lays them out
  mkdir -p "$1/include" "$1/lib"
  ln -s "$real_include/otf2" "$1/include/otf2"
  ln -s "$real_library" "$1/lib/libotf2.so"
}
fake "$work/root-a"
fake "$work/root-b"
fake "$work/prefix-path"
# otf2-config in a directory of its own, naming headers and library elsewhere (as a Score-P
# install may split them): only its output can lead there.
fake "$work/config/opt"
mkdir -p "$work/config/tools/bin"
cat > "$work/config/tools/bin/otf2-config" <<EOF
#!/bin/sh
case "\$1" in
  --cppflags) echo "-I$work/config/opt/include" ;;
  --ldflags) echo " -L$work/config/opt/lib" ;;
  --libs) echo " -lotf2" ;;
  *) exit 1 ;;
esac
EOF
chmod +x "$work/config/tools/bin/otf2-config"
mkdir -p "$work/old/include/otf2" "$work/old/lib"
ln -s "$real_library" "$work/old/lib/libotf2.so"
touch "$work/old/include/otf2/otf2.h"
printf '#define OTF2_VERSION        "2.3"\n' > "$work/old/include/otf2/OTF2_GeneralDefinitions.h"
mkdir -p "$work/emptybin" "$work/nothing"

# PATH without any otf2-config: cmake is called by its full path, make is all it needs there.
cmake=$(command -v cmake)
ln -s "$(command -v make)" "$work/emptybin/make"
clean_path="$work/emptybin"
unset OTF2_ROOT CMAKE_PREFIX_PATH

n=0
configure() {  # configure [VAR=VALUE ...] -- CMAKE_ARGS...: a fresh build directory each time
  n=$((n + 1))
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  env PATH="$clean_path" "${envs[@]}" "$cmake" -S "$source/tests/install/find_otf2" \
    -B "$work/b$n" -DCPREPLAY_SOURCE_DIR="$source" "$@" > "$work/out$n" 2>&1
}
expect_found() {  # expect_found WHAT PREFIX
  grep -qxF -- "-- OTF2 found: include=$2/include library=$2/lib/libotf2.so version=$real_version" \
    "$work/out$n" || { cat "$work/out$n"; fail "$1: expected OTF2 from $2"; }
}
expect_error() {  # expect_error WHAT LINE: the configure failed and printed LINE (indented)
  grep -qxF -- "   $2" "$work/out$n" || { cat "$work/out$n"; fail "$1: expected the line [$2]"; }
}
ways="Point CMake at OTF2 (Score-P's trace library, version 3.0 or later) in one of three ways: -DOTF2_ROOT=<prefix> (the directory holding include/otf2/otf2.h), CMAKE_PREFIX_PATH=<prefix>, or put otf2-config (shipped with Score-P and OTF2) on PATH."

# 1. -DOTF2_ROOT, even when CMAKE_PREFIX_PATH names another installation.
configure -- -DOTF2_ROOT="$work/root-a" -DCMAKE_PREFIX_PATH="$work/prefix-path" ||
  { cat "$work/out$n"; fail "OTF2_ROOT"; }
expect_found "-DOTF2_ROOT" "$work/root-a"
# ... and a changed OTF2_ROOT in the same build directory searches again.
env PATH="$clean_path" "$cmake" -S "$source/tests/install/find_otf2" -B "$work/b$n" \
  -DOTF2_ROOT="$work/root-b" > "$work/out$n" 2>&1 || { cat "$work/out$n"; fail "changed OTF2_ROOT"; }
expect_found "a changed -DOTF2_ROOT" "$work/root-b"
# OTF2_ROOT from the environment (as module files set it).
configure OTF2_ROOT="$work/root-b" -- || { cat "$work/out$n"; fail "environment OTF2_ROOT"; }
expect_found "OTF2_ROOT in the environment" "$work/root-b"

# 2. CMAKE_PREFIX_PATH, as a cache entry and as an environment variable (Spack, modules).
configure -- -DCMAKE_PREFIX_PATH="$work/prefix-path" || { cat "$work/out$n"; fail "prefix path"; }
expect_found "-DCMAKE_PREFIX_PATH" "$work/prefix-path"
configure CMAKE_PREFIX_PATH="$work/prefix-path" -- || { cat "$work/out$n"; fail "env prefix path"; }
expect_found "CMAKE_PREFIX_PATH in the environment" "$work/prefix-path"

# 3. otf2-config on PATH (ahead of the system's own OTF2, which the tests' machine has).
clean_path="$work/config/tools/bin:$work/emptybin"
configure -- || { cat "$work/out$n"; fail "otf2-config"; }
expect_found "otf2-config on PATH" "$work/config/opt"
clean_path="$work/emptybin"

# Errors. A wrong OTF2_ROOT is not papered over by another OTF2 (the system's, here).
configure -- -DOTF2_ROOT="$work/no-such-otf2" && fail "a bogus OTF2_ROOT was accepted"
expect_error "bogus OTF2_ROOT" "OTF2 not found: OTF2_ROOT=$work/no-such-otf2 has no include/otf2/otf2.h and lib/libotf2. $ways"
# Nothing anywhere: the system directories re-rooted into an empty one, no otf2-config.
configure -- -DCMAKE_FIND_ROOT_PATH="$work/nothing" -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY \
  -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY && fail "found an OTF2 in an empty root"
expect_error "no OTF2 anywhere" "OTF2 not found: neither CMAKE_PREFIX_PATH nor the system directories have it, and no otf2-config is on PATH. $ways"
# otf2-config present but leading nowhere.
mkdir -p "$work/broken/bin"
printf '#!/bin/sh\necho "-I%s/broken/include -L%s/broken/lib"\n' "$work" "$work" \
  > "$work/broken/bin/otf2-config"
chmod +x "$work/broken/bin/otf2-config"
clean_path="$work/broken/bin:$work/emptybin"
configure -- -DCMAKE_FIND_ROOT_PATH="$work/nothing" -DCMAKE_FIND_ROOT_PATH_MODE_INCLUDE=ONLY \
  -DCMAKE_FIND_ROOT_PATH_MODE_LIBRARY=ONLY && fail "found an OTF2 through a broken otf2-config"
expect_error "broken otf2-config" "OTF2 not found: neither CMAKE_PREFIX_PATH, $work/broken/bin/otf2-config nor the system directories have it. $ways"
clean_path="$work/emptybin"
# Too old.
configure -- -DOTF2_ROOT="$work/old" && fail "OTF2 2.3 was accepted"
expect_error "OTF2 2.3" "OTF2 2.3 ($work/old/include) is too old. $ways"

# The real project: a bogus OTF2_ROOT with otf2-config hidden from PATH stops the configure at
# OTF2, with the same line. PATH keeps the compilers: a directory holding otf2-config is replaced
# by a copy made of symlinks to everything else in it.
project_path=""
IFS=: read -ra dirs <<< "$PATH"
for d in "${dirs[@]}"; do
  [ -d "$d" ] || continue
  if [ -e "$d/otf2-config" ]; then
    farm="$work/tools/$(printf '%s' "$d" | tr / _)"
    mkdir -p "$farm"
    find "$d" -mindepth 1 -maxdepth 1 ! -name otf2-config -exec ln -sf -t "$farm" {} +
    d=$farm
  fi
  project_path+="${project_path:+:}$d"
done
PATH="$project_path" command -v otf2-config > /dev/null && fail "otf2-config still on PATH"
start=$(date +%s)
env PATH="$project_path" "$cmake" -S "$source" -B "$work/project" -DOTF2_ROOT="$work/no-such-otf2" \
  > "$work/project.out" 2>&1 && fail "the project configured with a bogus OTF2_ROOT"
grep -qxF -- "   OTF2 not found: OTF2_ROOT=$work/no-such-otf2 has no include/otf2/otf2.h and lib/libotf2. $ways" \
  "$work/project.out" || { cat "$work/project.out"; fail "the project's OTF2 error"; }
grep -q "Found MPI" "$work/project.out" && fail "the project looked for MPI before failing on OTF2"
echo "OTF2 discovery OK ($n module configures; the project's failing configure took $(( $(date +%s) - start )) s)"
