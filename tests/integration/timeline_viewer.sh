#!/usr/bin/env bash
# Opens a trace's default --timeline in a real viewer: speedscope's page in headless Chromium,
# served over HTTP from 127.0.0.1 (speedscope loads a profile URL only over http). Passes when
# the page shows the loaded profile: its views ("Time Order") and, beside its title, one
# profile per thread track that has region visits, wait states or stretches ("(1/N)").
# Skips (exit 77) where the trace, Chromium or speedscope is missing:
#   bash scripts/install-deps.sh --with-browser   (Chromium, and speedscope through npm into
#                                                  ~/.cache/cpreplay/speedscope, never the tree)
# CPREPLAY_SPEEDSCOPE names another speedscope release directory (the one with index.html).
# usage: timeline_viewer.sh MPIEXEC CPREPLAY TRACE_DIR WORK_DIR
set -u
mpiexec=$1 cpreplay=$2 dir=$3 work=$4
name=$(basename "$dir")
if [ ! -f "$dir/traces.otf2" ]; then
  echo "SKIP: $dir not present (../shared is absent): no real trace to open"
  exit 77
fi
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "SKIP: no Chromium installed (bash scripts/install-deps.sh --with-browser installs it)"
  exit 77
fi
viewer=${CPREPLAY_SPEEDSCOPE:-$HOME/.cache/cpreplay/speedscope/node_modules/speedscope/dist/release}
if [ ! -f "$viewer/index.html" ]; then
  echo "SKIP: no speedscope at $viewer (bash scripts/install-deps.sh --with-browser installs" \
       "it with npm, or set CPREPLAY_SPEEDSCOPE)"
  exit 77
fi
rm -rf "$work" && mkdir -p "$work/site" || exit 1
ranks=$(sed -n 's/.*"locations": *\([0-9][0-9]*\).*/\1/p' "$dir/expected.json" | head -n 1)
np=2
[ -n "$ranks" ] && [ "$ranks" -lt 2 ] && np=1
"$mpiexec" --oversubscribe -np "$np" "$cpreplay" -q --no-what-if -o "$work/r.cubex" \
  --timeline "$work/site/t.json" "$dir/traces.otf2" >/dev/null || {
  echo "FAIL: cpreplay exited with $?"; exit 1; }
ln -s "$viewer" "$work/site/viewer" || exit 1
# The thread tracks speedscope makes a profile of: those with complete events.
tracks=$(/usr/bin/python3 -c '
import json, sys
events = json.load(open(sys.argv[1]))["traceEvents"]
print(len({(e["pid"], e["tid"]) for e in events if e.get("ph") == "X"}))' "$work/site/t.json") || {
  echo "FAIL: the timeline does not parse"; exit 1; }
# A static server on a free port of 127.0.0.1, stopped on exit.
/usr/bin/python3 -c '
import http.server, os, socketserver, sys
os.chdir(sys.argv[1])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *args): pass
with socketserver.TCPServer(("127.0.0.1", 0), Quiet) as s:
    print(s.server_address[1], flush=True)
    s.serve_forever()' "$work/site" >"$work/port" 2>"$work/server.log" &
server=$!
trap 'kill $server 2>/dev/null' EXIT
for _ in $(seq 50); do [ -s "$work/port" ] && break; sleep 0.1; done
port=$(cat "$work/port")
[ -n "$port" ] || { echo "FAIL: the local HTTP server did not start"; exit 1; }
url="http://127.0.0.1:$port/viewer/index.html#profileURL=/t.json&title=$name"
# A fresh profile each time; no network beyond 127.0.0.1, no GPU, no sandbox (tests may run
# as root). Virtual time lets the page finish loading before the DOM is dumped.
start=$(date +%s)
timeout 500 "$browser" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
  --disable-background-networking --disable-component-update --disable-sync \
  --user-data-dir="$work/profile" --window-size=1200,800 --virtual-time-budget=300000 \
  --dump-dom "$url" >"$work/dom.html" 2>"$work/browser.log"
seconds=$(( $(date +%s) - start ))
bytes=$(stat -c %s "$work/site/t.json")
if ! grep -q "Time Order" "$work/dom.html"; then
  echo "FAIL: speedscope did not show the profile of $name ($bytes bytes) after $seconds s:"
  grep -o "Drag and drop[^<]*\|Something went wrong[^<]*" "$work/dom.html" | head -n 2
  tail -n 5 "$work/browser.log"
  exit 1
fi
shown=$(grep -o "$name <span[^>]*>(1/[0-9]*)" "$work/dom.html" | sed 's/.*(1\/\([0-9]*\))/\1/')
if [ "$shown" != "$tracks" ]; then
  echo "FAIL: speedscope shows ${shown:-no} profiles for $name, the timeline has $tracks tracks"
  exit 1
fi
echo "OK: speedscope opened $name's default timeline ($bytes bytes, $tracks tracks) in $seconds s"
