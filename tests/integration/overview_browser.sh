#!/usr/bin/env bash
# Opens an --overview SVG in headless Chromium and checks that the screenshot shows the picture.
# Skips (exit 77) where no Chromium is installed: scripts/install-deps.sh --with-browser adds it.
# usage: overview_browser.sh MPIEXEC CPREPLAY MKTRACE PNG_CHECK WORK_DIR [SCENARIO [MKTRACE OPTIONS]]
# (default: the example scenario, 4 ranks, 10 iterations)
set -u
mpiexec=$1 cpreplay=$2 mktrace=$3 png_check=$4 work=$5
shift 5
[ $# -gt 0 ] || set -- example --ranks 4 --iters 10
scenario=$1
shift
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium installed (bash scripts/install-deps.sh --with-browser installs it)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work" || exit 1
"$mktrace" "$scenario" "$work/t" "$@" >/dev/null || { echo "FAIL: mktrace"; exit 1; }
"$mpiexec" --oversubscribe -np 4 "$cpreplay" -q -o "$work/r.cubex" --overview "$work/o.svg" \
  "$work/t/traces.otf2" >/dev/null || { echo "FAIL: cpreplay exited with $?"; exit 1; }
# A fresh profile each time; no network, no GPU, no sandbox (the tests may run as root).
timeout 120 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --window-size=1160,600 --screenshot="$work/shot.png" \
  "file://$work/o.svg" >"$work/browser.log" 2>&1
if [ ! -s "$work/shot.png" ]; then
  echo "FAIL: $browser wrote no screenshot:"; tail -n 5 "$work/browser.log"; exit 1
fi
exec "$png_check" "$work/shot.png"
