#!/usr/bin/python3
"""The shipped models as ONNX Runtime's optimizer saves them (tests/data/ort_optimized, written
by tools/gen_contrib_tests.py) on recur, against the same models as shipped on recur and the
saved ones on ONNX Runtime 1.30 (CPU, through onnxruntime-node): does lowering ONNX Runtime's
fused operators cost recur anything, and where does it stand against ONNX Runtime on them?

Each round times, one after the other, recur on the shipped model, recur on the saved one and
ONNX Runtime on the saved one, on the model's test_data_set_0 inputs at one thread; the samples
of all rounds are pooled and the medians compared.

  /usr/bin/python3 tools/bench/ort_optimized_bench.py [--build build] [--rounds 5]
      [--repeat 40] [--warmup 5] [--providers onednn,reference]
"""
import argparse
import glob
import json
import os
import statistics
import subprocess
import sys
import tempfile

import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
NODE_PATH = os.path.expanduser("~/.cache/recur-bench/ort/node_modules")


def write_feeds(model_dir, out_dir):
    """test_data_set_0's inputs as the raw files and feeds.json ort_perf.js reads; returns
    recur-run's --input arguments for the same inputs."""
    feeds, inputs = [], []
    for k, f in enumerate(sorted(glob.glob(os.path.join(model_dir, "test_data_set_0",
                                                        "input_*.pb")))):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        a = numpy_helper.to_array(t)
        name = "in_%d.bin" % k
        a.tofile(os.path.join(out_dir, name))
        feeds.append({"name": t.name, "type": str(a.dtype), "shape": list(a.shape),
                      "file": name})
        inputs += ["--input", "%s=%s" % (t.name, f)]
    with open(os.path.join(out_dir, "feeds.json"), "w") as fh:
        json.dump(feeds, fh)
    return inputs


def recur_samples(args, model, inputs):
    out = subprocess.run([os.path.join(args.build, "tools", "recur-run"), model] + inputs +
                         ["--providers", args.providers, "--threads", "1",
                          "--perf", "--json", "--warmup", str(args.warmup), "--repeat",
                          str(args.repeat)], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["samples_ms"]


def ort_samples(args, model, feeds_dir):
    env = dict(os.environ, NODE_PATH=NODE_PATH)
    out = subprocess.run(["node", os.path.join(HERE, "ort_perf.js"), model, feeds_dir, "1",
                          str(args.warmup), str(args.repeat)], check=True, capture_output=True,
                         text=True, env=env).stdout
    return json.loads(out)["samples_ms"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=40)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--providers", default="onednn,reference")
    args = ap.parse_args()
    rows = []
    for saved in sorted(glob.glob(os.path.join(ROOT, "tests", "data", "ort_optimized",
                                               "*.onnx"))):
        name = os.path.splitext(os.path.basename(saved))[0]
        model_dir = os.path.join(ROOT, "models", name)
        with tempfile.TemporaryDirectory() as tmp:
            inputs = write_feeds(model_dir, tmp)
            shipped_s, saved_s, ort_s = [], [], []
            for _ in range(args.rounds):
                shipped_s += recur_samples(args, os.path.join(model_dir, "model.onnx"), inputs)
                saved_s += recur_samples(args, saved, inputs)
                ort_s += ort_samples(args, saved, tmp)
        shipped, mine, ort = (statistics.median(x) for x in (shipped_s, saved_s, ort_s))
        rows.append((name, shipped, mine, ort))
        print("%s: shipped %.4f ms, saved %.4f ms, ONNX Runtime on saved %.4f ms" %
              (name, shipped, mine, ort), file=sys.stderr)
    print("| model | recur, shipped model ms | recur, ONNX Runtime's saved model ms | "
          "ONNX Runtime, saved model ms | shipped / saved | ONNX Runtime / recur (saved) |")
    print("|---|---|---|---|---|---|")
    for name, shipped, mine, ort in rows:
        print("| %s | %.4f | %.4f | %.4f | %.2fx | %.2fx |" %
              (name, shipped, mine, ort, shipped / mine, ort / mine))


if __name__ == "__main__":
    main()
