#!/usr/bin/env python3
"""recur-bench's ONNX Runtime peer through the Python onnxruntime module (CPU), for machines
without Node (the GPU machine): the same arguments and JSON as tools/bench/ort_perf.js.

  ort_py_perf.py MODEL.onnx FEEDS_DIR THREADS WARMUP REPEAT
"""
import json
import os
import sys
import time

import numpy as np


def main():
    if len(sys.argv) != 6:
        sys.exit(__doc__)
    model, feeds_dir, threads, warmup, repeat = sys.argv[1:]
    threads, warmup, repeat = int(threads), int(warmup), int(repeat)
    import onnxruntime as ort
    with open(os.path.join(feeds_dir, "feeds.json")) as f:
        feeds = {e["name"]: np.load(os.path.join(feeds_dir, e["npy"])) for e in json.load(f)}
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    t0 = time.perf_counter()
    sess = ort.InferenceSession(model, opts, providers=["CPUExecutionProvider"])
    load_ms = (time.perf_counter() - t0) * 1e3
    for _ in range(warmup):
        sess.run(None, feeds)
    ms = []
    for _ in range(repeat):
        s = time.perf_counter()
        sess.run(None, feeds)
        ms.append((time.perf_counter() - s) * 1e3)
    print(json.dumps({"model": model, "engine": "onnxruntime " + ort.__version__,
                      "threads": threads, "load_ms": load_ms, "warmup": warmup, "runs": repeat,
                      "samples_ms": ms}))


if __name__ == "__main__":
    main()
