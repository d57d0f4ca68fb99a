# SPDX-License-Identifier: BSD-3-Clause
# Checks cpreplay's --timeline JSON and --overview SVG as strictly as their clients read them
# (Python's json without NaN/Infinity or duplicate keys, expat for XML) and prints what the
# tests assert on as JSON. Exit 1 with one line on stderr when a rule is broken.
#
# usage: check_views.py timeline FILE.json[.gz] | check_views.py svg FILE.svg
#
# Timeline events name their call path by stack frame ("sf", the Trace Event Format's
# stackFrames: each call path once, {"name": region, "parent": id}); the facts printed give
# each such event args.path, the path's names from the root joined by '/'.
import gzip
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"


def fail(msg):
    sys.stderr.write("check_views: %s\n" % msg)
    sys.exit(1)


def reject_constant(name):
    fail("non-standard JSON constant %s" % name)


def no_duplicates(pairs):
    keys = [k for k, _ in pairs]
    if len(keys) != len(set(keys)):
        fail("duplicate key in object: %r" % keys)
    return dict(pairs)


def check_timeline(path):
    opener = gzip.open if path.endswith(".gz") else open
    try:
        with opener(path, "rb") as f:
            raw = f.read()
    except (OSError, EOFError) as e:  # gzip.BadGzipFile is an OSError
        fail("%s cannot be read: %s" % (path, e))
    try:
        text = raw.decode("utf-8")  # strict: invalid UTF-8 is an error
        doc = json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        fail("%s does not parse: %s" % (path, e))
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        fail("no traceEvents array")
    if doc.get("displayTimeUnit") not in ("ms", "ns"):
        fail("displayTimeUnit must be \"ms\" or \"ns\"")
    frames = doc.get("stackFrames", {})
    if not isinstance(frames, dict):
        fail("stackFrames is not an object")
    for key, frame in frames.items():
        if not key.isdigit() or not isinstance(frame, dict) or \
                not isinstance(frame.get("name"), str) or set(frame) - {"name", "parent"}:
            fail("stack frame %r is not {name, parent}" % key)
        if "parent" in frame and (not isinstance(frame["parent"], str) or
                                  frame["parent"] not in frames or
                                  int(frame["parent"]) >= int(key)):
            fail("stack frame %r: parent %r is not an earlier frame" % (key, frame.get("parent")))
    paths = {}

    def frame_path(key):  # parents have smaller ids: resolved in id order, no recursion
        if key not in paths:
            chain = [key]
            while "parent" in frames[chain[-1]] and frames[chain[-1]]["parent"] not in paths:
                chain.append(frames[chain[-1]]["parent"])
            for k in reversed(chain):
                parent = frames[k].get("parent")
                paths[k] = (paths[parent] + "/" if parent is not None else "") + frames[k]["name"]
        return paths[key]
    events = doc["traceEvents"]
    names = {}      # pid -> process name
    sort_index = {}  # (pid, tid) -> thread_sort_index
    threads = {}    # (pid, tid) -> thread name
    per_thread = {}  # (pid, tid) -> [events in file order]
    flows = {}
    for i, e in enumerate(events):
        ph = e.get("ph")
        if not isinstance(e.get("pid"), int):
            fail("event %d has no integer pid" % i)
        if ph == "M":
            if e.get("name") == "process_name":
                names[e["pid"]] = e["args"]["name"]
            elif e.get("name") == "thread_name":
                if (e["pid"], e["tid"]) in threads:
                    fail("pid %d tid %d is named twice" % (e["pid"], e["tid"]))
                threads[(e["pid"], e["tid"])] = e["args"]["name"]
            elif e.get("name") in ("process_sort_index", "thread_sort_index"):
                if not isinstance(e.get("args", {}).get("sort_index"), int):
                    fail("event %d: %s without an integer sort_index" % (i, e["name"]))
                if e["name"] == "thread_sort_index":
                    sort_index[(e["pid"], e["tid"])] = e["args"]["sort_index"]
            else:
                fail("event %d: unknown metadata %r" % (i, e.get("name")))
            continue
        for key in ("tid", "ts"):
            if key not in e:
                fail("event %d (%s) has no %s" % (i, ph, key))
        if not isinstance(e["ts"], (int, float)) or e["ts"] < 0:
            fail("event %d: bad ts" % i)
        if ph == "X":
            if not isinstance(e.get("dur"), (int, float)) or e["dur"] < 0:
                fail("event %d: bad dur" % i)
            if not isinstance(e.get("name"), str):
                fail("event %d: no name" % i)
            if "sf" in e:
                if not isinstance(e["sf"], int) or str(e["sf"]) not in frames:
                    fail("event %d: sf %r names no stack frame" % (i, e["sf"]))
                e.setdefault("args", {})["path"] = frame_path(str(e["sf"]))
        elif ph in ("s", "f"):
            key = (e.get("cat"), e.get("name"), e.get("id"))
            slot = flows.setdefault(key, {})
            if ph in slot:
                fail("flow %r has two '%s' events" % (key, ph))
            slot[ph] = e
        else:
            fail("event %d: unexpected phase %r" % (i, ph))
        per_thread.setdefault((e["pid"], e["tid"]), []).append(e)
    # Per thread: time order, complete events properly nested. Tolerance: the file's
    # three decimals of a microsecond.
    eps = 0.0005
    for key, evs in per_thread.items():
        last_ts = -1.0
        stack = []
        for e in evs:
            if e["ts"] < last_ts - eps:
                fail("pid %d tid %d: ts %.3f after %.3f (not in time order)"
                     % (key[0], key[1], e["ts"], last_ts))
            last_ts = e["ts"]
            if e["ph"] != "X":
                continue
            end = e["ts"] + e["dur"]
            while stack and stack[-1] <= e["ts"] + eps:
                stack.pop()
            if stack and end > stack[-1] + eps:
                fail("pid %d tid %d: %s [%.3f, %.3f] overlaps its parent ending at %.3f"
                     % (key[0], key[1], e["name"], e["ts"], end, stack[-1]))
            stack.append(end)
    for key in per_thread:
        if key not in threads:
            fail("pid %d tid %d has events but no thread_name" % key)
    for key, pair in flows.items():
        if set(pair) != {"s", "f"}:
            fail("flow %r has no pair: only %s" % (key, sorted(pair)))
        if pair["f"]["ts"] < pair["s"]["ts"]:
            fail("flow %r ends before it starts" % (key,))
        if pair["f"].get("bp") != "e":
            fail("flow end %r does not bind to its enclosing slice" % (key,))
    cp_pids = [p for p, n in names.items() if n == "critical path"]
    if len(cp_pids) != 1:
        fail("expected one process named 'critical path', found %d" % len(cp_pids))
    cp_pid = cp_pids[0]
    stretches = sorted((e for e in events if e.get("pid") == cp_pid and e.get("ph") == "X"),
                       key=lambda e: e["ts"])
    def carrier(e):  # (rank, thread): pure-MPI stretches are on the master
        return (e["args"]["rank"], e["args"].get("thread", 0))
    tids = {}  # one track of the critical-path process per carrier, and back
    for e in stretches:
        if tids.setdefault(carrier(e), e["tid"]) != e["tid"]:
            fail("rank %d thread %d's stretches are on two tracks" % carrier(e))
    if len(set(tids.values())) != len(tids):
        fail("two threads' stretches share a track of the critical-path process")
    for a, b in zip(stretches, stretches[1:]):
        if abs(a["ts"] + a["dur"] - b["ts"]) > 1.0:
            fail("critical path not contiguous: stretch ends at %.3f, next begins at %.3f"
                 % (a["ts"] + a["dur"], b["ts"]))
        if carrier(a) != carrier(b):
            # A hand-over between ranks or threads: a flow from the one's track to the other's
            # at that time.
            ok = any(p["s"]["tid"] == a["tid"] and p["f"]["tid"] == b["tid"]
                     and abs(p["s"]["ts"] - b["ts"]) <= 1.0 for p in flows.values())
            if not ok:
                fail("no flow from rank %d thread %d to rank %d thread %d at %.3f"
                     % (carrier(a) + carrier(b) + (b["ts"],)))
    facts = {
        "processes": {str(p): n for p, n in sorted(names.items())},
        "threads": {"%d/%d" % k: n for k, n in sorted(threads.items())},
        "thread_sort_index": {"%d/%d" % k: n for k, n in sorted(sort_index.items())},
        "otherData": doc.get("otherData"),
        "flows": len(flows),
        "critical_path": [dict({"rank": e["args"]["rank"], "ts": e["ts"], "dur": e["dur"],
                                "path": e["args"]["path"], "name": e["name"], "tid": e["tid"]},
                               **({"thread": e["args"]["thread"]}
                                  if "thread" in e["args"] else {}))
                          for e in stretches],
        "critical_path_sum_us": sum(e["dur"] for e in stretches),
        "threads_events": {
            "%d/%d" % k: [[e["ph"], e.get("name"), e["ts"], e.get("dur"), e.get("args", {})]
                          for e in v]
            for k, v in sorted(per_thread.items()) if k[0] != cp_pid},
    }
    json.dump(facts, sys.stdout, sort_keys=True)


def check_svg(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError as e:
        fail("%s is not well-formed XML: %s" % (path, e))
    if root.tag != SVG + "svg":
        fail("root element is %s, not svg" % root.tag)
    for el in root.iter():
        for attr in ("href", "{http://www.w3.org/1999/xlink}href"):
            ref = el.get(attr)
            if ref is not None and not ref.startswith("#"):
                fail("external reference %s: not self-contained" % ref)
        if el.tag in (SVG + "script", SVG + "image", SVG + "foreignObject"):
            fail("%s element: not a plain picture" % el.tag)
    ranks = int(root.get("data-ranks"))
    rows = [g for g in root.iter(SVG + "g") if g.get("class") == "row"]
    thread_rows = [g for g in rows if g.get("data-thread") is not None]
    if thread_rows and (len(thread_rows) != len(rows) or root.get("data-rows") != "thread"):
        fail("some rows are threads, others not (data-rows=%r)" % root.get("data-rows"))
    covered = []
    for g in rows:
        first, last = int(g.get("data-first-rank")), int(g.get("data-last-rank"))
        if thread_rows:
            # A row per thread: each rank's threads 0, 1, ... in order, the ranks in order.
            if first != last:
                fail("a thread row covers ranks %d-%d" % (first, last))
            thread = int(g.get("data-thread"))
            expected = 0 if not covered or covered[-1][0] != first else covered[-1][1] + 1
            if thread != expected:
                fail("rank %d: thread row %d where %d belongs" % (first, thread, expected))
            covered.append((first, thread))
        else:
            covered.extend((r, 0) for r in range(first, last + 1))
    if sorted({r for r, _ in covered}) != list(range(ranks)) or \
            [r for r, _ in covered] != sorted(r for r, _ in covered):
        fail("rows do not cover ranks 0..%d once each in order" % (ranks - 1))
    if not thread_rows and len(covered) != ranks:
        fail("rows do not cover ranks 0..%d once each in order" % (ranks - 1))
    if root.get("data-threads") is not None:
        locations = int(root.get("data-threads"))
        counted = len(covered) if thread_rows else \
            sum(int(g.get("data-threads")) for g in rows)
        if counted != locations:
            fail("rows cover %d threads, data-threads says %d" % (counted, locations))
    area = [r for r in root.iter(SVG + "rect") if r.get("class") == "plot-area"]
    lines = [p for p in root.iter(SVG + "polyline") if p.get("class") == "critical-path"]
    if len(area) != 1 or len(lines) != 1:
        fail("expected one plot area and one critical-path line")
    points = [tuple(float(v) for v in p.split(",")) for p in lines[0].get("points").split()]
    # Every rectangle of a row lies inside the row's band of the plot, and the coloured ones of
    # one column do not overlap (each a share of the column).
    areas = {}
    rows_area = 0.0
    for g in rows:
        rects = [r for r in g if r.tag == SVG + "rect"]
        for r in rects:
            x, y, w, h = (float(r.get(k)) for k in ("x", "y", "width", "height"))
            if w <= 0 or h <= 0:
                fail("a row rectangle of no size at x=%s" % r.get("x"))
            key = "waiting" if r.get("class") == "waiting" else r.get("fill")
            areas[key] = areas.get(key, 0.0) + w * h
        rows_area += float(area[0].get("width")) * float(root.get("data-cell-height"))
    row_y = {}
    for g in rows:
        r = [c for c in g if c.tag == SVG + "rect"]
        row_y[g.get("data-first-rank")] = r[0].get("y") if r else None
    facts = {
        "ranks": ranks,
        "threads": int(root.get("data-threads")) if root.get("data-threads") else None,
        "row_unit": root.get("data-rows"),
        "rows": [[int(g.get("data-first-rank")), int(g.get("data-last-rank"))]
                 + ([int(g.get("data-thread"))] if g.get("data-thread") is not None else [])
                 for g in rows],
        "row_labels": [[t.text for t in g.iter(SVG + "text")] for g in rows],
        "separators": sum(1 for l in root.iter(SVG + "line") if l.get("class") == "rank-separator"),
        "run_seconds": float(root.get("data-run-seconds")),
        "plot_x": float(area[0].get("x")),
        "plot_width": float(area[0].get("width")),
        "plot_y": float(area[0].get("y")),
        "plot_height": float(area[0].get("height")),
        "path_points": points,
        "path_min_x": min(p[0] for p in points),
        "path_max_x": max(p[0] for p in points),
        "legend": [t.text for g in root.iter(SVG + "g") if g.get("class") == "legend"
                   for t in g.iter(SVG + "text")],
        "waiting_rects": sum(1 for r in root.iter(SVG + "rect") if r.get("class") == "waiting"),
        "row_fills": [sorted({r.get("fill") for r in g if r.tag == SVG + "rect"
                              and r.get("class") != "waiting"}) for g in rows],
        # Per row: its coloured runs [x, width, fill, y, height] and hatched runs
        # [x, width, y, height], in document order.
        "row_runs": [[[float(r.get("x")), float(r.get("width")), r.get("fill"),
                       float(r.get("y")), float(r.get("height"))] for r in g
                      if r.tag == SVG + "rect" and r.get("class") != "waiting"] for g in rows],
        "row_waiting": [[[float(r.get("x")), float(r.get("width")), float(r.get("y")),
                          float(r.get("height"))] for r in g
                         if r.tag == SVG + "rect" and r.get("class") == "waiting"] for g in rows],
        # The rendered areas: per fill colour (the hatch as "waiting"), and of all rows' cells
        # (plot width x data-cell-height each).
        "areas": areas,
        "rows_area": rows_area,
    }
    json.dump(facts, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] not in ("timeline", "svg"):
        fail("usage: check_views.py timeline FILE.json | check_views.py svg FILE.svg")
    (check_timeline if sys.argv[1] == "timeline" else check_svg)(sys.argv[2])
