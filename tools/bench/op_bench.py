#!/usr/bin/python3
"""Single-operator benchmark: the operators exported around the RNNs (convolutions,
normalizations, reductions, resizing, Fourier transforms, Einsum, activations), each one node
at a size found in audio, speech and text models, on recur (default providers: oneDNN, then
the reference) against ONNX Runtime 1.30 (CPU, through onnxruntime-node), one thread each.

  /usr/bin/python3 tools/bench/op_bench.py [--build build] [--rounds 3] [--repeat 7]
      [--warmup 2] [--threads 1] [--markdown OUT.md] [CASE ...]

For each case the engines alternate, recur then ONNX Runtime, `--rounds` times; each round is
`--warmup` untimed runs and `--repeat` timed ones. The figure per engine is the lowest of the
rounds' medians, and the ratio is ONNX Runtime's over recur's (above 1: recur is faster).
ONNX Runtime's times include the Node binding's copy of the outputs into JavaScript, a few
milliseconds for the 16 MiB outputs of the elementwise cases; recur-run's include no such copy,
so for cases whose time is mostly that copy the ratio flatters recur.

Models and inputs go to ~/.cache/recur-bench/ops; onnxruntime-node is installed there by
run_bench.py's helper when missing. Benchmarks never run in the test suite.
"""
import argparse
import json
import os
import platform
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import run_bench  # noqa: E402  (ensure_ort, CACHE)

rng = np.random.default_rng(0)


def f32(*s):
    return rng.standard_normal(s).astype(np.float32)


def i64(*v):
    return np.array(v, np.int64)


CASES = {}


def case(name, nodes, inputs, inits, outs, opset=17):
    CASES[name] = (nodes, inputs, inits, outs, opset)


N = helper.make_node
case("conv1d_k7", [N("Conv", ["x", "w", "b"], ["y"], pads=[3, 3])], {"x": f32(1, 512, 800)},
     {"w": f32(512, 512, 7) * 0.05, "b": f32(512)}, ["y"])
case("conv_transpose1d_s8", [N("ConvTranspose", ["x", "w", "b"], ["y"], strides=[8], pads=[4, 4])],
     {"x": f32(1, 512, 100)}, {"w": f32(512, 256, 16) * 0.05, "b": f32(256)}, ["y"])
case("conv_transpose2d_s2",
     [N("ConvTranspose", ["x", "w"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])],
     {"x": f32(1, 64, 64, 64)}, {"w": f32(64, 32, 4, 4) * 0.05}, ["y"])
case("depthwise_conv1d", [N("Conv", ["x", "w"], ["y"], pads=[2, 2], group=256)],
     {"x": f32(1, 256, 4000)}, {"w": f32(256, 1, 5)}, ["y"])
case("layer_norm", [N("LayerNormalization", ["x", "g", "b"], ["y"], axis=-1)],
     {"x": f32(1, 2000, 512)}, {"g": f32(512), "b": f32(512)}, ["y"])
case("instance_norm", [N("InstanceNormalization", ["x", "g", "b"], ["y"])],
     {"x": f32(1, 256, 8000)}, {"g": f32(256), "b": f32(256)}, ["y"])
case("batch_norm", [N("BatchNormalization", ["x", "s", "b", "m", "v"], ["y"])],
     {"x": f32(1, 128, 64, 256)},
     {"s": f32(128), "b": f32(128), "m": f32(128), "v": np.abs(f32(128)) + 1}, ["y"])
case("reduce_mean_last", [N("ReduceMean", ["x"], ["y"], axes=[-1])], {"x": f32(1, 512, 8000)}, {},
     ["y"])
case("reduce_sum_middle", [N("ReduceSum", ["x", "a"], ["y"])], {"x": f32(64, 512, 256)},
     {"a": i64(1)}, ["y"])
case("resize_nearest_2x", [N("Resize", ["x", "", "s"], ["y"], mode="nearest")],
     {"x": f32(1, 256, 64, 64)}, {"s": np.array([1, 1, 2, 2], np.float32)}, ["y"])
case("resize_linear_2x", [N("Resize", ["x", "", "s"], ["y"], mode="linear")],
     {"x": f32(1, 256, 64, 64)}, {"s": np.array([1, 1, 2, 2], np.float32)}, ["y"])
case("dft_512", [N("DFT", ["x"], ["y"], axis=1, onesided=1)], {"x": f32(400, 512, 1)}, {}, ["y"])
case("stft_400_160", [N("STFT", ["x", "st", "w", "l"], ["y"], onesided=1)], {"x": f32(1, 160000)},
     {"st": np.array(160, np.int64), "w": np.hanning(400).astype(np.float32),
      "l": np.array(400, np.int64)}, ["y"])
case("einsum_attention", [N("Einsum", ["x", "z"], ["y"], equation="bhid,bhjd->bhij")],
     {"x": f32(1, 8, 400, 64), "z": f32(1, 8, 400, 64)}, {}, ["y"])
case("gelu_20", [N("Gelu", ["x"], ["y"])], {"x": f32(1, 512, 8000)}, {}, ["y"], opset=20)
case("gelu_erf_pattern",
     [N("Div", ["x", "c"], ["d"]), N("Erf", ["d"], ["e"]), N("Add", ["e", "one"], ["f"]),
      N("Mul", ["x", "f"], ["g"]), N("Mul", ["g", "half"], ["y"])], {"x": f32(1, 512, 8000)},
     {"c": np.array(1.4142135, np.float32), "one": np.array(1, np.float32),
      "half": np.array(0.5, np.float32)}, ["y"])
case("matmul_bias", [N("MatMul", ["x", "w"], ["y"])], {"x": f32(1, 400, 512)},
     {"w": f32(512, 2048)}, ["y"])
case("softmax", [N("Softmax", ["x"], ["y"], axis=-1)], {"x": f32(8, 400, 400)}, {}, ["y"])
case("erf", [N("Erf", ["x"], ["y"])], {"x": f32(1, 512, 8000)}, {}, ["y"])
case("topk_10", [N("TopK", ["x", "k"], ["y", "i"])], {"x": f32(400, 10000)}, {"k": i64(10)},
     ["y", "i"])
case("argmax", [N("ArgMax", ["x"], ["y"], axis=-1)], {"x": f32(4000, 1000)}, {}, ["y"])
case("add", [N("Add", ["x", "z"], ["y"])], {"x": f32(1, 512, 8000), "z": f32(1, 512, 8000)}, {},
     ["y"])
case("mul_per_channel", [N("Mul", ["x", "a"], ["y"])], {"x": f32(1, 512, 8000)},
     {"a": f32(1, 512, 1)}, ["y"])
case("sin", [N("Sin", ["x"], ["y"])], {"x": f32(1, 512, 8000) * 3}, {}, ["y"])
# BigVGAN's Snake activation, x + 1/alpha * sin(alpha * x)^2, per channel alpha, as exported.
case("snake",
     [N("Mul", ["x", "a"], ["ax"]), N("Sin", ["ax"], ["s"]), N("Mul", ["s", "s"], ["s2"]),
      N("Mul", ["s2", "inv_a"], ["t"]), N("Add", ["x", "t"], ["y"])], {"x": f32(1, 512, 8000)},
     {"a": np.abs(f32(1, 512, 1)) + 0.5, "inv_a": 1 / (np.abs(f32(1, 512, 1)) + 0.5)}, ["y"])
# Speaker-embedding heads L2-normalize each vector.
case("lp_norm", [N("LpNormalization", ["x"], ["y"], axis=-1, p=2)], {"x": f32(4000, 512)}, {},
     ["y"])
# Optical-flow warping and deformable sampling: bilinear, zero padding, a grid in [-1.2, 1.2].
case("grid_sample", [N("GridSample", ["x", "g"], ["y"], mode="bilinear")],
     {"x": f32(1, 64, 128, 128), "g": (rng.random((1, 128, 128, 2)) * 2.4 - 1.2).astype(np.float32)},
     {}, ["y"], opset=16)

NP_TO_ORT = {np.float32: "float32", np.int64: "int64"}


def build(name, work):
    nodes, inputs, inits, outs, opset = CASES[name]
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    gi = [helper.make_tensor_value_info(k, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[v.dtype], v.shape)
          for k, v in inputs.items()]
    go = [onnx.ValueInfoProto(name=o) for o in outs]
    ini = [numpy_helper.from_array(v, k) for k, v in inits.items()]
    m = helper.make_model(helper.make_graph(nodes, name, gi, go, ini),
                          opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    onnx.save(m, os.path.join(d, "model.onnx"))
    feeds = []
    for k, v in inputs.items():
        v.tofile(os.path.join(d, k + ".raw"))
        np.save(os.path.join(d, k + ".npy"), v)
        feeds.append({"name": k, "type": NP_TO_ORT[v.dtype.type], "shape": list(v.shape),
                      "file": k + ".raw"})
    with open(os.path.join(d, "feeds.json"), "w") as f:
        json.dump(feeds, f)
    return d


def run_recur(args, d, inputs):
    cmd = [os.path.join(args.build, "tools", "recur-run"), os.path.join(d, "model.onnx"), "--perf",
           "--json", "--threads", str(args.threads), "--warmup", str(args.warmup), "--repeat",
           str(args.repeat)]
    for k in inputs:
        cmd += ["--input", "%s=%s" % (k, os.path.join(d, k + ".npy"))]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode:
        return None, out.stderr.strip().splitlines()[-1][-160:]
    j = json.loads(out.stdout[out.stdout.index("{"):])
    return j["latency_ms"]["p50"], ""


def run_ort(args, d, node_path):
    out = subprocess.run(["node", os.path.join(HERE, "ort_perf.js"), os.path.join(d, "model.onnx"),
                          d, str(args.threads), str(args.warmup), str(args.repeat)],
                         capture_output=True, text=True, env=dict(os.environ, NODE_PATH=node_path))
    if out.returncode:
        return None, out.stderr.strip().splitlines()[0][-160:]
    return json.loads(out.stdout)["latency_ms"]["p50"], ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("cases", nargs="*", help="cases to run (default: all)")
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--markdown", help="also write the table to this file")
    args = ap.parse_args()
    unknown = [c for c in args.cases if c not in CASES]
    if unknown:
        sys.exit("unknown cases: %s (known: %s)" % (", ".join(unknown), ", ".join(CASES)))
    node_path = run_bench.ensure_ort(os.path.join(run_bench.CACHE, "ort"))
    work = os.path.join(run_bench.CACHE, "ops")
    lines = ["| case | recur p50 ms | ONNX Runtime p50 ms | ORT / recur |", "|---|---|---|---|"]
    print(lines[0] + "\n" + lines[1], flush=True)
    for name in args.cases or list(CASES):
        d = build(name, work)
        rs, os_, err = [], [], ""
        for _ in range(args.rounds):
            a, ea = run_recur(args, d, CASES[name][1])
            b, eb = run_ort(args, d, node_path) if node_path else (None, "no ONNX Runtime")
            if a is not None:
                rs.append(a)
            if b is not None:
                os_.append(b)
            err = err or ea or eb
        r, o = (min(rs) if rs else None), (min(os_) if os_ else None)
        cell = lambda v: "%.3g" % v if v is not None else "failed"
        ratio = "**%.2fx**" % (o / r) if r and o else "-"
        line = "| %s | %s | %s | %s |" % (name, cell(r), cell(o), ratio)
        if err and (r is None or o is None):
            line += " " + err
        lines.append(line)
        print(line, flush=True)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write("Machine: %s, %d CPUs; %s\n\n" % (platform.processor() or platform.machine(),
                                                    os.cpu_count(), " ".join(sys.argv[1:])))
            f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
