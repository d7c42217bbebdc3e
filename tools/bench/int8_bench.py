#!/usr/bin/python3
"""The int8 CPU benchmark (issue 18; docs/bench-cpu.md, "int8"): the suite's LSTM cases
quantized the way ONNX Runtime's quantize_dynamic writes them (one com.microsoft
DynamicQuantizeLSTM node, per-channel int8 W and R; tools/gen_int8_tests.py quantize_lstm),
timed alternately in one run at each thread count:

  recur-dq     recur on the quantized model (oneDNN int8)
  ort-dq       ONNX Runtime 1.30 (onnxruntime-node) on the quantized model
  recur-int8   recur on the float model with --set onednn.precision=int8
  recur-fp32   recur on the float model (float32)

  /usr/bin/python3 tools/bench/int8_bench.py [--build build] [--threads 1,2] [--rounds 4]
      [--repeat 6] [--warmup 3] [--cases lstm_med,lstm_large,bilstm] [--json OUT.json]
      [--recur-set KEY=VALUE ...]

--recur-set passes `--set KEY=VALUE` to recur's int8 runs (recur-dq, recur-int8), e.g.
onednn.threading=omp to time one primitive per direction against the default batch slices.

The float models are the standard suite's (~/.cache/recur-bench/suite, tools/bench/gen_suite.py,
same weights and X); the quantized ones go to ~/.cache/recur-bench/int8. Each engine's samples
of all rounds are pooled; the ratios are of medians, with each round's own ratio range beside
them as the spread. Benchmarks never run in the test suite.
"""
import argparse
import json
import os
import statistics
import sys

import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import run_bench  # noqa: E402
from gen_int8_tests import quantize_lstm  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = run_bench.CACHE


def quantized_case(suite_dir, out_dir, case):
    """The quantized copy of suite case `case`, written once; returns its folder."""
    qdir = os.path.join(out_dir, case)
    if os.path.exists(os.path.join(qdir, "model.onnx")):
        return qdir
    m = onnx.load(os.path.join(suite_dir, case, "model.onnx"))
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    node = m.graph.node[0]
    attrs = {a.name: onnx.helper.get_attribute_value(a) for a in node.attribute}
    direction = attrs.get("direction", b"forward").decode()
    x = m.graph.input[0].type.tensor_type.shape.dim
    x_shape = tuple(d.dim_value for d in x)
    model = quantize_lstm(case + "_dq", x_shape, inits["W"], inits["R"], inits["B"],
                          int(attrs["hidden_size"]), direction, per_channel=True)
    os.makedirs(os.path.join(qdir, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(qdir, "model.onnx"))
    src = os.path.join(suite_dir, case, "test_data_set_0", "input_0.pb")
    with open(src, "rb") as f, open(os.path.join(qdir, "test_data_set_0", "input_0.pb"), "wb") as g:
        g.write(f.read())
    return qdir


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--repeat", type=int, default=6)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--cases", default="lstm_med,lstm_large,bilstm")
    ap.add_argument("--suite-dir", default=os.path.join(CACHE, "suite"))
    ap.add_argument("--json", default=os.path.join(CACHE, "int8-results.json"))
    ap.add_argument("--recur-set", action="append", default=[],
                    help="KEY=VALUE passed as --set to recur's int8 runs (repeatable)")
    args = ap.parse_args()
    recur_run = os.path.join(args.build, "tools", "recur-run")
    run_bench.ensure_suite(args.suite_dir)
    node_path = run_bench.ensure_ort(os.path.join(CACHE, "ort"))
    if not node_path:
        sys.exit("ONNX Runtime (onnxruntime-node) is needed")
    results = []
    recur_sets = [a for kv in args.recur_set for a in ("--set", kv)]
    for threads in [int(t) for t in args.threads.split(",")]:
        for case in args.cases.split(","):
            fdir = os.path.join(args.suite_dir, case)
            qdir = quantized_case(args.suite_dir, os.path.join(CACHE, "int8"), case)
            engines = {
                "recur-dq": lambda: run_bench.run_recur(recur_run, qdir, "onednn", threads,
                                                        args.warmup, args.repeat,
                                                        recur_sets)[0],
                "ort-dq": lambda: run_bench.run_ort(node_path, os.path.join(qdir, "model.onnx"),
                                                    fdir, threads, args.warmup, args.repeat),
                "recur-int8": lambda: run_bench.run_recur(
                    recur_run, fdir, "onednn", threads, args.warmup, args.repeat,
                    ["--set", "onednn.precision=int8"] + recur_sets)[0],
                "recur-fp32": lambda: run_bench.run_recur(recur_run, fdir, "onednn", threads,
                                                          args.warmup, args.repeat)[0],
            }
            samples = {e: [] for e in engines}
            per_round = {e: [] for e in engines}
            for _ in range(args.rounds):
                for e, f in engines.items():
                    s = f()["samples_ms"]
                    samples[e] += s
                    per_round[e].append(statistics.median(s))
            med = {e: statistics.median(v) for e, v in samples.items()}

            def ratio(a, b):
                rs = [x / y for x, y in zip(per_round[a], per_round[b])]
                return {"ratio": med[a] / med[b], "round_min": min(rs), "round_max": max(rs)}

            entry = {"case": case, "threads": threads, "median_ms": med,
                     "dq_vs_ort": ratio("ort-dq", "recur-dq"),
                     "int8_vs_ort_dq": ratio("ort-dq", "recur-int8"),
                     "int8_vs_fp32": ratio("recur-fp32", "recur-int8")}
            results.append(entry)
            print("%-11s %dt  recur-dq %.2f ms  ort-dq %.2f ms  recur-int8 %.2f ms  "
                  "recur-fp32 %.2f ms | ort-dq/recur-dq x%.2f [%.2f-%.2f]  "
                  "fp32/int8 x%.2f [%.2f-%.2f]" % (
                      case, threads, med["recur-dq"], med["ort-dq"], med["recur-int8"],
                      med["recur-fp32"], entry["dq_vs_ort"]["ratio"],
                      entry["dq_vs_ort"]["round_min"], entry["dq_vs_ort"]["round_max"],
                      entry["int8_vs_fp32"]["ratio"], entry["int8_vs_fp32"]["round_min"],
                      entry["int8_vs_fp32"]["round_max"]), flush=True)
    with open(args.json, "w") as f:
        json.dump({"commit": run_bench.git_commit(), "machine": run_bench.machine(),
                   "recur_set": args.recur_set, "results": results}, f, indent=1)
    print("wrote", args.json)


if __name__ == "__main__":
    main()
