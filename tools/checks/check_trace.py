#!/usr/bin/python3
"""Checks a recur profile (SessionOptions::profile, recur-run --profile) against the Chrome
trace event format that chrome://tracing and Perfetto read, and against what recur promises:

  - a JSON object with a "traceEvents" array (and "displayTimeUnit" "ms" or "ns" if present);
  - every event has a string "name" and a one-letter "ph"; "X" (complete) events have numeric
    "ts" and "dur" (dur >= 0) and integer "pid" and "tid"; "M" (metadata) events name a
    process or thread in args.name;
  - node events (cat "node") carry args.op, args.provider, args.run and args.input_shapes
    (a list of int lists or nulls);
  - a subgraph node (args.parent) lies within an event of its parent node on the same tid and
    run, and a Loop or Scan body node has an integer args.iteration;
  - every node event lies within its run's "run" event on the same tid.

  check_trace.py TRACE.json [--runs N] [--nodes-per-run N]
prints the problems and exits 1 if there are any. The functions are also imported by
tests/tools/profile_trace_test.py.
"""
import argparse
import json
import numbers
import sys

# Timestamps are written with three decimals (ns resolution in us): allow that much slack.
EPS = 0.002


def _is_int(v):
    return isinstance(v, numbers.Integral) and not isinstance(v, bool)


def _is_num(v):
    return isinstance(v, numbers.Real) and not isinstance(v, bool)


def _within(inner, outer):
    return (inner["ts"] >= outer["ts"] - EPS and
            inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + EPS)


def check_event(i, e, problems):
    where = "event %d" % i
    if not isinstance(e, dict):
        problems.append("%s is not an object" % where)
        return False
    if not isinstance(e.get("name"), str):
        problems.append("%s has no string name" % where)
    ph = e.get("ph")
    if not isinstance(ph, str) or len(ph) != 1:
        problems.append("%s has no one-letter ph" % where)
        return False
    if ph == "M":
        if not isinstance(e.get("args", {}).get("name"), str):
            problems.append("%s (metadata) has no args.name" % where)
        return False
    if ph != "X":
        return False
    ok = True
    for key in ("ts", "dur"):
        if not _is_num(e.get(key)):
            problems.append("%s (%s) has no numeric %s" % (where, e.get("name"), key))
            ok = False
    for key in ("pid", "tid"):
        if not _is_int(e.get(key)):
            problems.append("%s (%s) has no integer %s" % (where, e.get("name"), key))
            ok = False
    if ok and e["dur"] < 0:
        problems.append("%s (%s) has a negative duration" % (where, e.get("name")))
    if "args" in e and not isinstance(e["args"], dict):
        problems.append("%s (%s) has args that are not an object" % (where, e.get("name")))
        ok = False
    return ok


def check_node_args(e, problems):
    a = e.get("args", {})
    name = e["name"]
    for key in ("op", "provider"):
        if not isinstance(a.get(key), str) or not a[key]:
            problems.append("node %s has no args.%s" % (name, key))
    if not _is_int(a.get("run")):
        problems.append("node %s has no integer args.run" % name)
    shapes = a.get("input_shapes")
    if not isinstance(shapes, list) or not all(
            s is None or (isinstance(s, list) and all(_is_int(d) for d in s)) for s in shapes):
        problems.append("node %s has no args.input_shapes list of int lists" % name)
    if "parent" in a and "iteration" in a and not _is_int(a["iteration"]):
        problems.append("node %s has a non-integer args.iteration" % name)


def check_nesting(nodes, runs, problems):
    by_run = {}
    for r in runs:
        by_run[(r["tid"], r.get("args", {}).get("run"))] = r
    by_name = {}
    for n in nodes:
        by_name.setdefault((n["name"], n["tid"], n["args"].get("run")), []).append(n)
    for n in nodes:
        a = n["args"]
        run = by_run.get((n["tid"], a.get("run")))
        if run is None:
            problems.append("node %s (run %s) has no run event on tid %s"
                            % (n["name"], a.get("run"), n["tid"]))
        elif not _within(n, run):
            problems.append("node %s lies outside its run %s" % (n["name"], a.get("run")))
        if "parent" in a:
            parents = by_name.get((a["parent"], n["tid"], a.get("run")), [])
            if not any(_within(n, p) for p in parents):
                problems.append("subgraph node %s lies outside every event of its parent %s"
                                % (n["name"], a["parent"]))


def check_trace(doc, runs=None, nodes_per_run=None):
    """The problems found in a parsed trace (empty when it is valid). `runs`: the number of
    run events expected; `nodes_per_run`: the node events expected in each run."""
    problems = []
    if not isinstance(doc, dict) or not isinstance(doc.get("traceEvents"), list):
        return ["the trace is not an object with a traceEvents array"]
    if doc.get("displayTimeUnit", "ms") not in ("ms", "ns"):
        problems.append("displayTimeUnit must be ms or ns")
    complete = [e for i, e in enumerate(doc["traceEvents"]) if check_event(i, e, problems)]
    nodes = [e for e in complete if e.get("cat") == "node"]
    run_events = [e for e in complete if e.get("cat") == "run"]
    for n in nodes:
        check_node_args(n, problems)
    if problems:
        return problems
    check_nesting(nodes, run_events, problems)
    if runs is not None and len(run_events) != runs:
        problems.append("%d run events, expected %d" % (len(run_events), runs))
    if nodes_per_run is not None:
        count = {}
        for n in nodes:
            count[n["args"]["run"]] = count.get(n["args"]["run"], 0) + 1
        for r in run_events:
            k = r["args"]["run"]
            if count.get(k, 0) != nodes_per_run:
                problems.append("run %s has %d node events, expected %d"
                                % (k, count.get(k, 0), nodes_per_run))
    return problems


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--runs", type=int)
    ap.add_argument("--nodes-per-run", type=int)
    a = ap.parse_args(argv)
    try:
        with open(a.trace) as f:
            doc = json.load(f)
    except (OSError, ValueError) as e:
        print("%s: not valid JSON: %s" % (a.trace, e))
        return 1
    problems = check_trace(doc, a.runs, a.nodes_per_run)
    for p in problems:
        print("%s: %s" % (a.trace, p))
    if not problems:
        print("%s: valid (%d events)" % (a.trace, len(doc["traceEvents"])))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
