#!/usr/bin/env python3
"""A session fed inputs of varying shape, as a server of OCR lines or utterances is: the median
time of a run at a shape the session has not seen, of a run at one it has, the mean of all
runs, and its resident memory (VmRSS) after load and after the runs. recur runs through its
Python module (build/python); with --ort, ONNX Runtime 1.30 runs the same sequence through
onnxruntime-node (tools/bench/ort_varying.js, NODE_PATH as for tools/recur-bench).

    tools/bench/varying_shapes.py MODEL.onnx INPUT 1,1,32,100+4*i --count 20 [--threads 1]
        [--stream 200] [--set onednn.shape_buckets=0] [--ort]

The shape is one expression of i (0 to count-1) per dimension; the input is float32, uniform
in [0, 1). The sequence is every shape once, then every shape again; with --stream N it is N
shapes drawn at random (seed 0) from the count, as a server meets lengths that sometimes come
back. The first run is left out, or the first N with --skip N. docs/bench-cpu.md ("Inputs of varying length") has what it
measured.
"""
import argparse
import json
import os
import random
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


def sequence_of(shapes, stream):
    if not stream:
        return shapes + shapes
    rng = random.Random(0)
    return [rng.choice(shapes) for _ in range(stream)]


def run_recur(args, sequence):
    sys.path.insert(0, os.path.join(args.build, "python"))
    import numpy as np
    import recur
    so = recur.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.settings = dict(kv.split("=", 1) for kv in args.set)
    session = recur.InferenceSession(args.model, so, providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    feeds = [rng.random(s, dtype=np.float32) for s in sequence]
    loaded = rss_mib()
    times = []
    for x in feeds:
        t0 = time.perf_counter()
        session.run(None, {args.input: x})
        times.append((time.perf_counter() - t0) * 1e3)
    return {"times_ms": times, "rss_loaded_mib": loaded, "rss_after_mib": rss_mib()}


def run_ort(args, sequence):
    # Where tools/recur-bench installs onnxruntime-node, unless NODE_PATH says otherwise.
    sys.path.insert(0, os.path.join(ROOT, "tools"))
    from recur_bench import workload
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.join(workload.CACHE, "ort", "node_modules"))
    out = subprocess.run(["node", os.path.join(ROOT, "tools", "bench", "ort_varying.js"),
                          args.model, args.input, json.dumps(sequence), str(args.threads)],
                         capture_output=True, text=True, env=env)
    if out.returncode != 0:
        sys.exit("onnxruntime-node failed (install it with tools/recur-bench --peers "
                 "onnxruntime, or set NODE_PATH): " + out.stderr.strip()[-400:])
    return json.loads(out.stdout)


def summary(sequence, r, skip):
    """Medians of first sightings and of repeats, and the mean, leaving out the first `skip`
    runs (at least the first)."""
    seen, new, again = set(), [], []
    skip = max(1, skip)
    for i, (shape, ms) in enumerate(zip(sequence, r["times_ms"])):
        key = tuple(shape)
        if i >= skip:
            (again if key in seen else new).append(ms)
        seen.add(key)
    times = r["times_ms"][skip:]
    med = lambda a: f"{statistics.median(a):.2f}" if a else "-"
    return (f"new shape {med(new)} ms ({len(new)}), seen {med(again)} ms ({len(again)}), "
            f"mean {statistics.fmean(times):.2f} ms; RSS {r['rss_loaded_mib']:.0f} MiB loaded, "
            f"{r['rss_after_mib']:.0f} after")


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("input")
    p.add_argument("shape", help="dims as expressions of i, comma-separated: 1,1,32,100+4*i")
    p.add_argument("--count", type=int, default=20)
    p.add_argument("--stream", type=int, default=0, help="N runs of shapes drawn at random")
    p.add_argument("--skip", type=int, default=1, help="leave the first N runs out (warm-up)")
    p.add_argument("--threads", type=int, default=1)
    p.add_argument("--set", action="append", default=[], metavar="KEY=VALUE",
                   help="a recur provider setting (onednn.shape_buckets=0); repeatable")
    p.add_argument("--ort", action="store_true", help="ONNX Runtime too, through node")
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    sequence = sequence_of(shapes_of(args.shape, args.count), args.stream)
    engines = [("recur", run_recur)] + ([("onnxruntime", run_ort)] if args.ort else [])
    for name, fn in engines:
        print(f"{name:12s} {summary(sequence, fn(args, sequence), args.skip)}")


if __name__ == "__main__":
    main()
