#!/usr/bin/python3
"""timeline_check.py FILE...: check TSR_TIMELINE files against the Trace Event Format's rules, the
ones Perfetto's JSON importer and chrome://tracing rely on, and print a summary of each file (one
JSON line) for the tests to read. Exit status 1, with the rule and the event, on the first file
that breaks one.

The rules (Trace Event Format, "JSON Object Format"; Perfetto's legacy JSON importer):
  - the file is JSON (no NaN or Infinity), an object whose "traceEvents" is a list of objects;
  - every event has a known phase "ph" and the keys its phase requires: X name ts dur pid tid;
    M name pid args (thread_* also tid); C name ts pid args; b/e cat id name ts pid; s/f cat id
    name ts pid tid;
  - pid >= 1 and tid >= 1 (Perfetto treats pid 0 as the kernel's swapper);
  - ts and dur are finite numbers >= 0;
  - metadata events are the known ones (process_name, process_labels, process_sort_index,
    thread_name, thread_sort_index), names are strings and sort indexes integers;
  - every counter's args are numbers only (a string argument is a parse failure in Perfetto);
  - every process has a process_name and every thread with slices a thread_name;
  - the X slices of one thread nest or follow each other, never overlap partly (Perfetto nests
    the slices of a track strictly and drops what does not nest);
  - async slices: each "b" has one "e" with the same cat, name and id, not earlier;
  - flows: each id has one "s" and one "f" with the same cat and name, "f" not earlier, each
    strictly inside a slice of its thread (the one it binds to: Perfetto binds "s" to the slice
    open on its track, "f" with "bp": "e" to the enclosing one; "bp" is "e" if given).
"""
import json
import sys
from decimal import Decimal

PHASES = set("XBEMCbensftiIPONDR")
META = {"process_name", "process_labels", "process_sort_index", "thread_name", "thread_sort_index"}
REQUIRED = {
    "X": ("name", "ts", "dur", "pid", "tid"),
    "B": ("name", "ts", "pid", "tid"),
    "E": ("ts", "pid", "tid"),
    "M": ("name", "pid", "args"),
    "C": ("name", "ts", "pid", "args"),
    "b": ("cat", "id", "name", "ts", "pid"),
    "e": ("cat", "id", "name", "ts", "pid"),
    "s": ("cat", "id", "name", "ts", "pid", "tid"),
    "t": ("cat", "id", "name", "ts", "pid", "tid"),
    "f": ("cat", "id", "name", "ts", "pid", "tid"),
    "i": ("name", "ts", "pid"),
    "I": ("name", "ts", "pid"),
}


class Broken(Exception):
    pass


def need(cond, rule, ev=None):
    if not cond:
        raise Broken(rule + ("" if ev is None else ": " + json.dumps(ev, default=str)[:300]))


def is_num(v):
    return isinstance(v, (int, Decimal)) and not isinstance(v, bool)


def reject_constant(c):
    raise Broken("not JSON: " + c)


def check_event(ev):
    need(isinstance(ev, dict), "an event is not an object", ev)
    ph = ev.get("ph")
    need(ph in PHASES, "unknown phase", ev)
    for k in REQUIRED.get(ph, ()):
        need(k in ev, "phase %s needs key %s" % (ph, k), ev)
    need(isinstance(ev.get("pid", 1), int) and ev.get("pid", 1) >= 1, "pid >= 1", ev)
    if "tid" in ev:
        need(isinstance(ev["tid"], int) and ev["tid"] >= 1, "tid >= 1", ev)
    for k in ("ts", "dur"):
        if k in ev:
            need(is_num(ev[k]) and ev[k] >= 0, k + " is a number >= 0", ev)
    if "name" in ev:
        need(isinstance(ev["name"], str), "name is a string", ev)
    if "args" in ev:
        need(isinstance(ev["args"], dict), "args is an object", ev)
    if ph == "M":
        need(ev["name"] in META, "unknown metadata event", ev)
        if ev["name"].startswith("thread"):
            need("tid" in ev, "thread metadata needs tid", ev)
        if ev["name"].endswith("_name"):
            need(isinstance(ev["args"].get("name"), str), "metadata name is a string", ev)
        if ev["name"].endswith("_sort_index"):
            need(isinstance(ev["args"].get("sort_index"), int), "sort_index is an integer", ev)
    if ph == "C":
        need(ev["args"], "a counter has values", ev)
        for k, v in ev["args"].items():
            need(is_num(v), "counter values are numbers (%s)" % k, ev)
    if ph == "f" and "bp" in ev:
        need(ev["bp"] == "e", "bp is 'e'", ev)


def check_nesting(slices):
    """slices: (ts, end, event) of one thread; they nest or are disjoint."""
    slices.sort(key=lambda s: (s[0], -s[1]))
    open_ends = []
    for ts, end, ev in slices:
        while open_ends and open_ends[-1] <= ts:
            open_ends.pop()
        need(not open_ends or end <= open_ends[-1], "slices of one thread overlap partly", ev)
        open_ends.append(end)


def inside(slices, ts):
    """strictly: at a slice's very start or end, the binding depends on event order"""
    return any(s < ts < e for s, e, _ in slices)


def check_file(path):
    with open(path) as f:
        d = json.load(f, parse_float=Decimal, parse_constant=reject_constant)
    need(isinstance(d, dict) and isinstance(d.get("traceEvents"), list),
         "the file is an object with a traceEvents list")
    need(d.get("displayTimeUnit", "ms") in ("ms", "ns"), "displayTimeUnit is ms or ns")
    events = d["traceEvents"]
    for ev in events:
        check_event(ev)

    pnames = {ev["pid"] for ev in events if ev["ph"] == "M" and ev["name"] == "process_name"}
    tnames = {(ev["pid"], ev["tid"]): ev["args"]["name"] for ev in events
              if ev["ph"] == "M" and ev["name"] == "thread_name"}
    slices = {}
    for ev in events:
        need(ev["pid"] in pnames, "every process has a process_name", ev)
        if ev["ph"] in "XBE":
            need((ev["pid"], ev["tid"]) in tnames, "every thread with slices has a thread_name", ev)
        if ev["ph"] == "X":
            slices.setdefault((ev["pid"], ev["tid"]), []).append(
                (ev["ts"], ev["ts"] + ev["dur"], ev))
    for s in slices.values():
        check_nesting(s)

    asyncs, flows = {}, {}
    for ev in events:
        if ev["ph"] in "be":
            asyncs.setdefault((ev["pid"], ev["cat"], ev["name"], ev["id"]), []).append(ev)
        if ev["ph"] in "sf":
            flows.setdefault(ev["id"], []).append(ev)
    for evs in asyncs.values():
        need(sorted(e["ph"] for e in evs) == ["b", "e"], "one b and one e per async id", evs[0])
        b = next(e for e in evs if e["ph"] == "b")
        e = next(e for e in evs if e["ph"] == "e")
        need(e["ts"] >= b["ts"], "an async slice ends after it begins", e)
    for evs in flows.values():
        need(sorted(e["ph"] for e in evs) == ["f", "s"], "one s and one f per flow id", evs[0])
        s = next(e for e in evs if e["ph"] == "s")
        f = next(e for e in evs if e["ph"] == "f")
        need((s["cat"], s["name"]) == (f["cat"], f["name"]), "a flow's s and f match", f)
        need(f["ts"] >= s["ts"], "a flow ends after it starts", f)
        for e in (s, f):
            need(inside(slices.get((e["pid"], e["tid"]), []), e["ts"]),
                 "a flow event lies in a slice of its thread", e)

    xs = [ev for ev in events if ev["ph"] == "X"]
    fetched, totals = {}, {}
    for ev in xs:
        if ev.get("cat") == "transfer" and ev["name"].startswith("fetch"):
            k = "%d->%d" % (ev["args"]["src_node"], ev["args"]["dst_node"])
            fetched[k] = fetched.get(k, 0) + int(ev["args"]["bytes"])
    for ev in events:
        if ev["ph"] == "C" and ev["name"].startswith("StarPU bus "):
            k = ev["name"].split()[2]
            totals[k] = max(totals.get(k, 0), int(ev["args"]["bytes"]))
    return {
        "file": path,
        "pids": sorted(pnames),
        "threads": sorted(tnames.values()),
        "slices": {c: sum(1 for ev in xs if ev.get("cat") == c)
                   for c in sorted({ev.get("cat", "") for ev in xs})},
        "fetched": fetched,
        "bus_totals": totals,
        "transfer_bytes": sum(int(ev["args"].get("bytes", 0)) for ev in xs
                              if ev.get("cat") == "transfer"),
        "counters": sorted({ev["name"] for ev in events if ev["ph"] == "C"}),
        "async": len(asyncs),
        "flows": len(flows),
        "tasks": sorted({ev["args"]["task"] for ev in xs if ev.get("cat") in ("task", "tessera")}),
        "otherData": {k: (int(v) if isinstance(v, Decimal) else v)
                      for k, v in d.get("otherData", {}).items()},
    }


def main():
    if len(sys.argv) < 2:
        print("usage: timeline_check.py FILE...", file=sys.stderr)
        return 2
    for path in sys.argv[1:]:
        try:
            print(json.dumps(check_file(path), sort_keys=True))
        except Broken as b:
            print("timeline_check: %s: %s" % (path, b), file=sys.stderr)
            return 1
        except (OSError, ValueError) as e:
            print("timeline_check: %s: %s" % (path, e), file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
