#!/usr/bin/env python3
"""Random RNN cells and few-row products on the oneDNN provider against the reference provider.

Each case is one node: an LSTM, GRU or RNN (1 to 256 units, 1 to 65 rows, 1 to 30 steps, every
direction, both layouts, sequence lengths, initial states, peepholes, input_forget, both
linear_before_reset, any activations with their alpha and beta, clip), or a MatMul, MatMul + Add or Gemm by a constant B (1 to 33
rows, B up to 1536 x 4096, transA, transB, alpha, beta, every shape of C). It runs on
`onednn,reference` at 1 and 2 threads, twice (the second run must give the same bits), and on
`reference` alone; each output must be within 1e-5 + 1e-4 |reference| of the reference's, or,
for a cell, no further from the float64 oracle (tools/rnn_oracle.py) than twice the reference's
distance (ten times where the reference is itself beyond the tolerance from float64, or ten
times float64's own move when the inputs move by half an ulp): a cell that grows carries both
providers' rounding up with it. An output where the reference overflowed is not compared.

Weights are scaled by 1/sqrt(fan-in). Larger ones make a chaotic recurrence, where two float32
sums of the same terms in another order end apart by O(1) within tens of steps (both providers
then differ from float64 by more than from each other), which says nothing about either.

    tools/checks/random_cells.py rnn|matmul [--seed S] [--count N] [--build build]

Run it again under ONEDNN_MAX_CPU_ISA=AVX2 for the AVX2 loops. Exit status 1 where a case fails.
"""
import argparse
import os
import random
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("kind", choices=["rnn", "matmul"])
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--count", type=int, default=100)
ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="a build with python/")
args = ap.parse_args()
sys.path.insert(0, os.path.join(args.build, "python"))
import recur  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "tools"))
import rnn_oracle  # noqa: E402

rng = random.Random(args.seed)
values = np.random.default_rng(args.seed)


def normal(shape, scale=1.0):
    return (values.standard_normal(shape) * scale).astype(np.float32)


def model(nodes, feeds, inits, outputs):
    def dtype(v):
        return TensorProto.FLOAT if v.dtype == np.float32 else TensorProto.INT32

    inputs = [helper.make_tensor_value_info(k, dtype(v), v.shape) for k, v in feeds.items()]
    outs = [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs]
    graph = helper.make_graph(nodes, "g", inputs, outs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])


def rnn_case():
    op = rng.choice(["LSTM", "GRU", "RNN"])
    H = rng.choice([1, 3, 8, 16, 17, 31, 32, 48, 64, 65, 100, 128, 129, 200, 256])
    I = rng.choice([1, 2, 7, 16, 40, 64, 80, 128, 257])
    N = rng.choice([1, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 64, 65])
    T = rng.choice([1, 2, 3, 5, 12, 30])
    direction = rng.choice(["forward", "reverse", "bidirectional"])
    D = 2 if direction == "bidirectional" else 1
    layout = rng.choice([0, 1])
    G = {"LSTM": 4, "GRU": 3, "RNN": 1}[op]
    attrs = dict(hidden_size=H, direction=direction, layout=layout)
    if op == "GRU":
        attrs["linear_before_reset"] = rng.choice([0, 1])
    if op == "LSTM" and rng.random() < 0.2:
        attrs["input_forget"] = 1
    if op == "RNN" and rng.random() < 0.3:
        attrs["activations"] = [rng.choice(["Tanh", "Relu", "Sigmoid"])] * D
    if rng.random() < 0.25:  # oneDNN's primitives have none of these: recur's general path
        kinds = {"Sigmoid": 0, "Tanh": 0, "Relu": 0, "HardSigmoid": 2, "Softsign": 0,
                 "ScaledTanh": 2, "Affine": 2, "LeakyRelu": 1, "ThresholdedRelu": 1, "Elu": 1,
                 "Softplus": 0}
        acts = [rng.choice(list(kinds)) for _ in range({"LSTM": 3, "GRU": 2, "RNN": 1}[op] * D)]
        attrs["activations"] = acts
        alpha = [round(rng.uniform(0.1, 0.9), 2) for a in acts if kinds[a] >= 1]
        beta = [round(rng.uniform(0.1, 0.9), 2) for a in acts if kinds[a] == 2]
        if alpha:
            attrs["activation_alpha"] = alpha
        if beta:
            attrs["activation_beta"] = beta
    if rng.random() < 0.2:
        attrs["clip"] = rng.choice([0.5, 1.0, 3.0])
    gain = rng.choice([0.3, 0.7, 1.0])
    inits = [numpy_helper.from_array(normal((D, G * H, I), gain / np.sqrt(I)), "W"),
             numpy_helper.from_array(normal((D, G * H, H), gain / np.sqrt(H)), "R")]
    feeds = {"X": normal((N, T, I) if layout else (T, N, I))}
    ins = ["X", "W", "R", "", "", ""]
    if rng.random() < 0.7:
        inits.append(numpy_helper.from_array(normal((D, 2 * G * H), gain), "B"))
        ins[3] = "B"
    if rng.random() < 0.3:
        feeds["lens"] = np.array([rng.randint(0 if rng.random() < 0.2 else 1, T)
                                  for _ in range(N)], np.int32)
        ins[4] = "lens"
    state = (N, D, H) if layout else (D, N, H)
    if rng.random() < 0.5:
        feeds["h0"] = normal(state, 0.5)
        ins[5] = "h0"
    if op == "LSTM":
        ins += ["", ""]
        if rng.random() < 0.5:
            feeds["c0"] = normal(state, 0.5)
            ins[6] = "c0"
        if rng.random() < 0.25:
            inits.append(numpy_helper.from_array(normal((D, 3 * H), gain), "P"))
            ins[7] = "P"
    while ins[-1] == "":
        ins.pop()
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    desc = f"{op} {attrs} I={I} N={N} T={T} inputs={ins}"
    return model([helper.make_node(op, ins, outs, **attrs)], feeds, inits, outs), feeds, desc


def matmul_case():
    M = rng.choice([1, 1, 2, 3, 4, 5, 7, 8, 9, 12, 16, 17, 33])
    K = rng.choice([1, 7, 64, 100, 255, 512, 1000, 1536])
    N = rng.choice([1, 5, 16, 63, 64, 65, 200, 1000, 1024, 3000, 4096])
    op = rng.choice(["MatMul", "MatMul+Add", "Gemm"])
    if op == "Gemm":
        ta, tb = int(rng.random() < 0.2), rng.choice([0, 1])
        alpha, beta = rng.choice([1.0, 1.0, 0.5]), rng.choice([1.0, 0.0, 2.0])
        feeds = {"A": normal((K, M) if ta else (M, K))}
        inits = [numpy_helper.from_array(normal((N, K) if tb else (K, N), 1 / np.sqrt(K)), "B")]
        ins = ["A", "B"]
        c = rng.choice([None, (N,), (1, N), (M, N), (M, 1)])
        if c is not None:
            inits.append(numpy_helper.from_array(normal(c), "C"))
            ins.append("C")
        nodes = [helper.make_node("Gemm", ins, ["Y"], alpha=alpha, beta=beta, transA=ta,
                                  transB=tb)]
        desc = f"Gemm M={M} K={K} N={N} transA={ta} transB={tb} alpha={alpha} beta={beta} C={c}"
    else:
        lead = rng.choice([(), (), (2,), (1, 3)])
        feeds = {"A": normal(lead + (M, K))}
        inits = [numpy_helper.from_array(normal((K, N), 1 / np.sqrt(K)), "B")]
        nodes = [helper.make_node("MatMul", ["A", "B"], ["Y" if op == "MatMul" else "P"])]
        if op == "MatMul+Add":
            inits.append(numpy_helper.from_array(normal((N,)), "bias"))
            nodes.append(helper.make_node("Add", ["P", "bias"], ["Y"]))
        desc = f"{op} A={lead + (M, K)} N={N}"
    return model(nodes, feeds, inits, ["Y"]), feeds, desc


def float64_errors(m, feeds, got, want):
    """For an RNN node: the largest error of oneDNN's and of the reference's outputs against
    the float64 oracle (tools/rnn_oracle.py), scaled as the tolerance is, and how far the
    oracle itself moves, on the same scale, when every float32 input moves by up to half a
    float32 ulp (three random draws): the cell's own sensitivity to float32 rounding, known
    without either provider."""
    node = m.graph.node[0]
    arrays = {t.name: numpy_helper.to_array(t) for t in m.graph.initializer}
    arrays.update(feeds)

    def oracle(values):
        out = rnn_oracle.run_node(node, [values.get(i) if i else None for i in node.input])
        return [e for e, o in zip(out, node.output) if o]
    exact = oracle(arrays)

    def error(outs):
        return max(float((np.abs(o.astype(np.float64) - e) / (1e-5 + 1e-4 * np.abs(e))).max())
                   for o, e in zip(outs, exact) if o.size)
    nudge = np.random.default_rng(0)
    spread = 0.0
    for _ in range(3):
        moved = {k: v.astype(np.float64) * (1 + nudge.uniform(-1, 1, v.shape) * 2.0**-24)
                 if v.dtype == np.float32 else v for k, v in arrays.items()}
        with np.errstate(over="ignore", invalid="ignore"):
            spread = max(spread, error(oracle(moved)))
    return error(got), error(want), spread


def session(m, providers, threads):
    options = recur.SessionOptions()
    options.intra_op_num_threads = threads
    return recur.InferenceSession(m.SerializeToString(), options, providers=providers)


failures = runs = drifts = overflows = 0
worst = 0.0
for _ in range(args.count):
    m, feeds, desc = rnn_case() if args.kind == "rnn" else matmul_case()
    want = session(m, ["reference"], 1).run(None, feeds)
    for threads in (1, 2):
        try:
            s = session(m, ["onednn", "reference"], threads)
            got, again = s.run(None, feeds), s.run(None, feeds)
        except recur.Error as e:
            print(f"FAIL {desc}, {threads} threads: {e}")
            failures += 1
            continue
        runs += 1
        for g, a, w in zip(got, again, want):
            why = None
            if g.shape != w.shape:
                why = f"shape {g.shape}, reference {w.shape}"
            elif not np.array_equal(g, a, equal_nan=True):
                why = "a second run gave other bits"
            elif g.size:
                if not np.isfinite(w).all():
                    # A cell that grows without bound (a GRU whose z is a softplus) overflows;
                    # where, depends on each provider's rounding. Not compared, but counted.
                    overflows += 1
                elif not np.isfinite(g).all():
                    why = "non-finite values where the reference has none"
                else:
                    off = np.abs(g.astype(np.float64) - w) / (1e-5 + 1e-4 * np.abs(w))
                    worst = max(worst, float(off.max()))
                    if off.max() > 1:
                        why = f"{off.max():.2f} times the tolerance"
                    if why and args.kind == "rnn":
                        # A cell that grows (an input_forget LSTM whose gate is a tanh: f up
                        # to 2) carries both providers' rounding up with it. The float64
                        # oracle says which drifted: oneDNN fails only by drifting further.
                        mine, theirs, spread = float64_errors(m, feeds, got, want)
                        why += (f"; against float64 {mine:.2f} here, {theirs:.2f} on the "
                                f"reference, {spread:.2f} for inputs moved by half an ulp")
                        # Where the reference itself is beyond the tolerance from float64, the
                        # cell is ill-conditioned (its rounding grows tenfold and more), and
                        # which float32 order lands nearer is chance: within 10 times. And within
                        # ten times float64's own move when the inputs move by half an ulp: each
                        # step's sums and activations round about as much again.
                        if mine <= max(1.0, (10 if theirs > 1 else 2) * theirs, 10 * spread):
                            print(f"drift {desc}, {threads} threads: {why}")
                            drifts += 1
                            why = None
            if why:
                print(f"FAIL {desc}, {threads} threads: {why}")
                failures += 1
isa = os.environ.get("ONEDNN_MAX_CPU_ISA", "all")
print(f"{args.kind} seed {args.seed}, ISA cap {isa}: {args.count} cases, {runs} sessions, "
      f"{failures} failures, largest difference {worst:.3f} of the tolerance, {drifts} outputs "
      f"where both providers drift from float64, {overflows} not compared (the reference "
      "overflowed)")
sys.exit(1 if failures else 0)
