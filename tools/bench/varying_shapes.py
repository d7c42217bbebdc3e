#!/usr/bin/env python3
"""A session fed a new input shape on every run, as a server of OCR lines or utterances of
varying length is: the median time of a run at a shape it has not seen, then of the same
shapes again, and its resident memory (VmRSS) after load and after the new shapes. recur runs
through its Python module (build/python); with --ort, ONNX Runtime 1.30 runs the same shapes
through onnxruntime-node (tools/bench/ort_varying.js, NODE_PATH as for tools/recur-bench).

    tools/bench/varying_shapes.py MODEL.onnx INPUT 1,1,32,100+4*i --count 20 [--threads 1] [--ort]

The shape is one expression of i (0 to count-1) per dimension; the input is float32, uniform
in [0, 1). docs/bench-cpu.md ("Inputs of varying length") has what it measured.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def rss_mib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return float("nan")


def shapes_of(template, count):
    dims = template.split(",")
    return [[int(eval(d, {"__builtins__": {}}, {"i": i})) for d in dims] for i in range(count)]


def run_recur(args, shapes):
    sys.path.insert(0, os.path.join(args.build, "python"))
    import numpy as np
    import recur
    so = recur.SessionOptions()
    so.intra_op_num_threads = args.threads
    session = recur.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = [rng.random(s, dtype=np.float32) for s in shapes]
    loaded = rss_mib()
    session.run(None, {args.input: feeds[0]})
    times = {"new": [], "seen": []}
    for kind in ("new", "seen"):
        for x in feeds[1:]:
            t0 = time.perf_counter()
            session.run(None, {args.input: x})
            times[kind].append((time.perf_counter() - t0) * 1e3)
        if kind == "new":
            after = rss_mib()
    return {"new_ms": statistics.median(times["new"]), "seen_ms": statistics.median(times["seen"]),
            "rss_loaded_mib": loaded, "rss_after_mib": after}


def run_ort(args, shapes):
    # Where tools/recur-bench installs onnxruntime-node, unless NODE_PATH says otherwise.
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from recur_bench import workload
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.join(workload.CACHE, "ort", "node_modules"))
    out = subprocess.run(["node", os.path.join(ROOT, "tools", "bench", "ort_varying.js"),
                          args.model, args.input, json.dumps(shapes), str(args.threads)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("onnxruntime-node failed (install it with tools/recur-bench --peers "
                 "onnxruntime, or set NODE_PATH): " + out.stderr.strip()[-400:])
    return json.loads(out.stdout)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("shape", help="dims as expressions of i, comma-separated: 1,1,32,100+4*i")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--ort", action="store_true", help="ONNX Runtime too, through node")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    shapes = shapes_of(args.shape, args.count)
    engines = [("recur", run_recur)] + ([("onnxruntime", run_ort)] if args.ort else [])
    for name, fn in engines:
        r = fn(args, shapes)
        print(f"{name:12s} new shape {r['new_ms']:.2f} ms, seen {r['seen_ms']:.2f} ms (medians of "
              f"{args.count - 1}); RSS {r['rss_loaded_mib']:.0f} MiB loaded, "
              f"{r['rss_after_mib']:.0f} MiB after the new shapes")


if __name__ == "__main__":
    main()
