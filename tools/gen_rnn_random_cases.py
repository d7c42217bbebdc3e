#!/usr/bin/python3
"""Writes N random single-node LSTM, GRU and RNN cases in ONNX backend-test layout, with
expected outputs from the float64 numpy oracle (tools/rnn_oracle.py), for a three-way check of
recur, ONNX Runtime and the oracle on attribute combinations that the fixed cases of
tools/gen_rnn_tests.py do not list one by one (clip with sequence_lens and peepholes in both
directions, input_forget with initial states, lengths of 0 and T, and so on).

    /usr/bin/python3 tools/gen_rnn_random_cases.py --out /tmp/rnn-random --count 300 [--seed 1]
    build/tools/recur-run --suite /tmp/rnn-random            # recur against the oracle
    /usr/bin/python3 tools/ort_conformance.py /tmp/rnn-random --list   # ONNX Runtime against it

Every case keeps to what ONNX Runtime 1.30's CPU kernels accept (layout 0, float32, one set of
activations per direction), and gives alpha and beta explicitly to Affine, ScaledTanh and
ThresholdedRelu, whose defaults ONNX Runtime does not take from the ONNX operators
(docs/semantics.md, "ONNX Runtime"). So a case that fails on one engine and passes on the other
is a disagreement between the two, and one that fails on both points at the oracle.
The same seed writes the same cases.
"""

import argparse
import os
import shutil
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_rnn_tests as g  # noqa: E402

# Activation functions a gate may take without its output collapsing to a constant, per slot
# kind: "gate" (f, bounded to [0, 1] in the default), "cand" (g and h).
GATE_ACTS = ["Sigmoid", "HardSigmoid", "Affine", "Softsign", "ScaledTanh", "Tanh"]
CAND_ACTS = ["Tanh", "Relu", "LeakyRelu", "ThresholdedRelu", "Elu", "Softsign", "Softplus",
             "ScaledTanh", "Affine", "Sigmoid", "HardSigmoid"]
ALPHA = {"Affine": (0.3, 1.2), "LeakyRelu": (0.01, 0.3), "ThresholdedRelu": (-0.5, 0.5),
         "ScaledTanh": (0.5, 1.5), "HardSigmoid": (0.1, 0.4), "Elu": (0.5, 1.5)}
BETA = {"Affine": (-0.2, 0.2), "ScaledTanh": (0.5, 1.5), "HardSigmoid": (0.3, 0.7)}


def random_case(rng, k):
    op = ["LSTM", "GRU", "RNN"][k % 3]
    direction = str(rng.choice(["forward", "reverse", "bidirectional"]))
    D = 2 if direction == "bidirectional" else 1
    T = int(rng.integers(1, 7))
    N = int(rng.integers(1, 5))
    attrs = {}
    inputs = {"B"} if rng.random() < 0.8 else set()
    if rng.random() < 0.5:
        inputs.add("initial_h")
    if op == "LSTM":
        if rng.random() < 0.4:
            inputs.add("initial_c")
        if rng.random() < 0.4:
            inputs.add("P")
        if rng.random() < 0.25:
            attrs["input_forget"] = 1
    if op == "GRU":
        attrs["linear_before_reset"] = int(rng.integers(0, 2))
    if rng.random() < 0.35:
        attrs["clip"] = float(np.round(rng.uniform(0.2, 2.0), 3))
    lens = None
    if rng.random() < 0.5:
        lens = [int(v) for v in rng.integers(0, T + 1, size=N)]
    if rng.random() < 0.4:
        slots = len(g.DEFAULT_ACTS[op])
        names, alphas, betas = [], [], []
        for _ in range(D):
            for s in range(slots):
                pool = GATE_ACTS if (op != "RNN" and s == 0) else CAND_ACTS
                names.append(str(rng.choice(pool)))
        for n in names:
            if n in ALPHA:
                alphas.append(float(np.round(rng.uniform(*ALPHA[n]), 3)))
            if n in BETA:
                betas.append(float(np.round(rng.uniform(*BETA[n]), 3)))
        attrs["activations"] = names
        # ONNX Runtime consumes the alphas and the betas each in order, as recur does; the
        # defaults matter only when a list runs out, so every parameter is given.
        if alphas:
            attrs["activation_alpha"] = alphas
        if betas:
            attrs["activation_beta"] = betas
    outputs = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    kept = [o for o in outputs if rng.random() < 0.8] or [outputs[0]]
    return g.Case("random_%04d_%s" % (k, op.lower()), op, T=T, N=N,
                  I=int(rng.integers(1, 6)), H=int(rng.integers(1, 7)), direction=direction,
                  attrs=attrs, inputs=tuple(sorted(inputs)), lens=lens, outputs=kept,
                  weights="input" if rng.random() < 0.3 else "init",
                  x_scale=float(rng.choice([0.5, 1.0, 3.0])))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--count", type=int, default=300)
    ap.add_argument("--seed", type=int, default=1)
    a = ap.parse_args()
    if os.path.isdir(a.out):
        shutil.rmtree(a.out)
    os.makedirs(a.out)
    rng = np.random.default_rng(a.seed)
    for k in range(a.count):
        g.write_case(a.out, random_case(rng, k))
    print("wrote %d cases to %s (seed %d)" % (a.count, a.out, a.seed))
    return 0


if __name__ == "__main__":
    sys.exit(main())
