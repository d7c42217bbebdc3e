#!/usr/bin/python3
"""Writes the RNN feature cases under tests/data/rnn/<case>/ in ONNX backend-test layout:
model.onnx (one LSTM, GRU or RNN node) and test_data_set_0/input_K.pb, output_K.pb, whose
expected outputs come from the float64 numpy oracle (tools/rnn_oracle.py). Inputs are random
normal (never zeros) from a fixed seed per case, so the data is reproducible.

Usage: /usr/bin/python3 tools/gen_rnn_tests.py [--out tests/data/rnn] [--list]
Existing case folders under --out are replaced; folders of cases no longer listed are removed.
"""

import argparse
import hashlib
import os
import shutil
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnn_oracle  # noqa: E402
from test_folder import write_test_folder  # noqa: E402

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.float64: TensorProto.DOUBLE,
              np.float16: TensorProto.FLOAT16, np.int32: TensorProto.INT32}
ACTIVATIONS = ["Relu", "Tanh", "Sigmoid", "Affine", "LeakyRelu", "ThresholdedRelu", "ScaledTanh",
               "HardSigmoid", "Elu", "Softsign", "Softplus"]
TAKES = {"Affine": (True, True), "LeakyRelu": (True, False), "ThresholdedRelu": (True, False),
         "ScaledTanh": (True, True), "HardSigmoid": (True, True), "Elu": (True, False)}
DEFAULT_ACTS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}


class Case:
    """One test: a single RNN node and its data.

    inputs: which optional inputs are present ("B", "sequence_lens", "initial_h", "initial_c",
    "P"). outputs: which of "Y", "Y_h", "Y_c" the node names (the others are "" or dropped).
    weights: "init" (W, R, B, P are initializers) or "input" (graph inputs, fed by the data).
    """

    def __init__(self, name, op, T=3, N=2, I=3, H=4, direction="forward", attrs=None,
                 inputs=("B",), lens=None, outputs=None, weights="init", dtype=np.float32,
                 opset=14, hidden_attr=True, x_scale=1.0):
        self.name, self.op, self.T, self.N, self.I, self.H = name, op, T, N, I, H
        self.direction = direction
        self.attrs = dict(attrs or {})
        self.inputs = set(inputs)
        self.lens = lens
        if lens is not None:
            self.inputs.add("sequence_lens")
        self.outputs = outputs or (["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"])
        self.weights = weights
        self.dtype = dtype
        self.opset = opset
        self.hidden_attr = hidden_attr
        self.x_scale = x_scale


def cases():
    out = []
    add = out.append
    cells = ["LSTM", "GRU", "RNN"]
    low = {"LSTM": "lstm", "GRU": "gru", "RNN": "rnn"}

    # Every activation for every cell, in a rotating slot, with default and explicit alpha/beta.
    # LSTM slot (0 f for the gates, 1 g, 2 h) per function, chosen so that outputs stay lively
    # (a Relu or ThresholdedRelu gate zeroes most of Y).
    lstm_slot = {"Relu": 1, "Tanh": 0, "Sigmoid": 2, "Affine": 0, "LeakyRelu": 1,
                 "ThresholdedRelu": 1, "ScaledTanh": 2, "HardSigmoid": 0, "Elu": 1,
                 "Softsign": 2, "Softplus": 0}
    alpha_values = {"ThresholdedRelu": [0.2, -0.3, -0.2], "ScaledTanh": [1.2, 1.5, 0.9]}
    beta_values = {"ScaledTanh": [0.8, 1.4, 0.6], "HardSigmoid": [0.45, 0.55, 0.6]}
    for op in cells:
        slots = len(DEFAULT_ACTS[op])
        for k, act in enumerate(ACTIVATIONS):
            acts = list(DEFAULT_ACTS[op])
            acts[lstm_slot[act] if op == "LSTM" else k % slots] = act
            name = "%s_%s" % (low[op], act.lower())
            # ThresholdedRelu zeroes what is below its threshold: larger inputs keep Y alive.
            xs = 2.5 if act == "ThresholdedRelu" else 1.0
            add(Case(name, op, attrs={"activations": acts}, inputs=("B", "initial_h"),
                     x_scale=xs))
            if act in TAKES:
                ta, tb = TAKES[act]
                a = {"activations": [act] * slots}
                # Distinct values per slot, so that the order of consumption matters.
                if ta:
                    a["activation_alpha"] = alpha_values.get(act, [0.7, 0.4, 1.3])[:slots]
                if tb:
                    a["activation_beta"] = beta_values.get(act, [0.3, -0.2, 0.6])[:slots]
                add(Case(name + "_alpha_beta", op, attrs=a, inputs=("B", "initial_h"),
                         x_scale=xs))

    # alpha/beta consumed in order by the functions that take them, across directions.
    add(Case("lstm_mixed_alpha_beta_order", "LSTM", direction="bidirectional",
             attrs={"activations": ["HardSigmoid", "Elu", "ScaledTanh",
                                    "Sigmoid", "LeakyRelu", "Affine"],
                    "activation_alpha": [0.3, 0.8, 1.5, 0.05, 0.9],
                    "activation_beta": [0.45, 0.7, -0.1]},
             inputs=("B", "initial_h", "initial_c")))
    add(Case("gru_mixed_alpha_beta_order", "GRU", direction="bidirectional",
             attrs={"activations": ["HardSigmoid", "Affine", "Sigmoid", "ScaledTanh"],
                    "activation_alpha": [0.25, 0.5, 1.2],
                    "activation_beta": [0.4, 0.1, 0.8]},
             inputs=("B",)))
    add(Case("rnn_bidirectional_alpha_per_direction", "RNN", direction="bidirectional",
             attrs={"activations": ["LeakyRelu", "Elu"], "activation_alpha": [0.2, 0.6]}))
    add(Case("lstm_bidirectional_one_activation_set", "LSTM", direction="bidirectional",
             attrs={"activations": ["HardSigmoid", "Softsign", "Tanh"],
                    "activation_alpha": [0.3], "activation_beta": [0.4]},
             inputs=("B",), lens=[3, 1]))
    add(Case("rnn_bidirectional_one_activation_set", "RNN", direction="bidirectional",
             attrs={"activations": ["Relu"]}))

    # Directions, with and without sequence lengths (zeros and full lengths mixed).
    for op in cells:
        full = ("B", "initial_h", "initial_c") if op == "LSTM" else ("B", "initial_h")
        for d in ["forward", "reverse", "bidirectional"]:
            add(Case("%s_%s" % (low[op], d), op, direction=d, inputs=full))
            add(Case("%s_%s_seqlens" % (low[op], d), op, T=5, N=4, direction=d, inputs=full,
                     lens=[5, 0, 3, 1]))
        add(Case("%s_forward_seqlens_all_full" % low[op], op, T=4, N=3, inputs=full,
                 lens=[4, 4, 4]))
        add(Case("%s_bidirectional_seqlens_all_zero" % low[op], op, T=3, N=2, inputs=full,
                 direction="bidirectional", lens=[0, 0]))
        # layout 1 (opset 14)
        add(Case("%s_layout1_forward" % low[op], op, attrs={"layout": 1}, inputs=full))
        add(Case("%s_layout1_reverse" % low[op], op, attrs={"layout": 1}, direction="reverse",
                 inputs=full))
        add(Case("%s_bidirectional_layout1" % low[op], op, attrs={"layout": 1},
                 direction="bidirectional", inputs=full))
        add(Case("%s_bidirectional_layout1_seqlens" % low[op], op, T=4, N=3, I=5, H=7,
                 attrs={"layout": 1}, direction="bidirectional", inputs=full, lens=[2, 4, 0]))
        # clip
        add(Case("%s_clip" % low[op], op, attrs={"clip": 0.5}, inputs=full))
        add(Case("%s_clip_bidirectional_seqlens" % low[op], op, T=4, N=3, attrs={"clip": 0.8},
                 direction="bidirectional", inputs=full, lens=[4, 1, 3]))
        # initial states and bias present or absent
        add(Case("%s_no_bias_no_initial" % low[op], op, inputs=()))
        add(Case("%s_initial_h_only" % low[op], op, inputs=("initial_h",)))
        # sizes
        add(Case("%s_odd_sizes" % low[op], op, T=4, N=3, I=5, H=7, direction="bidirectional",
                 inputs=full))
        add(Case("%s_batch1" % low[op], op, N=1, T=4, inputs=full))
        add(Case("%s_seq1" % low[op], op, T=1, N=3, inputs=full))
        add(Case("%s_seq1_reverse_seqlens" % low[op], op, T=1, N=3, direction="reverse",
                 inputs=full, lens=[1, 0, 1]))
        add(Case("%s_input_size1" % low[op], op, I=1, H=3, inputs=full))
        # hidden_size taken from R when the attribute is absent
        add(Case("%s_no_hidden_size_attr" % low[op], op, inputs=full, hidden_attr=False))
        # weights as graph inputs (packed per run, not at load)
        add(Case("%s_weights_as_inputs" % low[op], op, T=4, N=3, direction="bidirectional",
                 inputs=full, lens=[4, 0, 2], weights="input"))
        # dtypes
        add(Case("%s_float64" % low[op], op, T=4, N=3, direction="bidirectional", inputs=full,
                 lens=[4, 2, 0], dtype=np.float64))
        add(Case("%s_float16" % low[op], op, direction="bidirectional", inputs=full,
                 dtype=np.float16))
        # older opsets
        add(Case("%s_opset7_reverse" % low[op], op, opset=7, direction="reverse", inputs=full,
                 lens=[2, 3], T=3))
        add(Case("%s_opset1" % low[op], op, opset=1, inputs=full))
        # output subsets
        subsets = [["Y"], ["Y_h"], ["Y", "Y_h"]]
        if op == "LSTM":
            subsets += [["Y_c"], ["Y", "Y_c"], ["Y_h", "Y_c"]]
        for sub in subsets:
            add(Case("%s_outputs_%s" % (low[op], "_".join(s.lower() for s in sub)), op,
                     direction="bidirectional", inputs=full, lens=[3, 1], outputs=sub))

    # LSTM-only attributes and inputs
    add(Case("lstm_peepholes", "LSTM", inputs=("B", "P", "initial_h", "initial_c")))
    add(Case("lstm_peepholes_no_bias", "LSTM", inputs=("P",)))
    add(Case("lstm_peepholes_bidirectional_seqlens", "LSTM", T=4, N=3, I=5, H=7,
             direction="bidirectional", inputs=("B", "P", "initial_h", "initial_c"),
             lens=[4, 2, 0]))
    add(Case("lstm_peepholes_clip", "LSTM", attrs={"clip": 0.6},
             inputs=("B", "P", "initial_h", "initial_c")))
    add(Case("lstm_peepholes_weights_as_inputs", "LSTM", direction="reverse",
             inputs=("B", "P", "initial_c"), lens=[3, 2], weights="input"))
    add(Case("lstm_input_forget", "LSTM", attrs={"input_forget": 1},
             inputs=("B", "initial_h", "initial_c")))
    add(Case("lstm_input_forget_clip", "LSTM", attrs={"input_forget": 1, "clip": 0.4},
             inputs=("B", "initial_h", "initial_c")))
    add(Case("lstm_input_forget_peepholes", "LSTM", attrs={"input_forget": 1},
             direction="bidirectional", inputs=("B", "P", "initial_h", "initial_c"),
             lens=[3, 2]))
    add(Case("lstm_initial_c_only", "LSTM", inputs=("initial_c",)))
    add(Case("lstm_layout1_peepholes_initial_states", "LSTM", attrs={"layout": 1},
             direction="bidirectional", inputs=("B", "P", "initial_h", "initial_c"),
             lens=[1, 3]))

    # GRU linear_before_reset 0 and 1 in every direction
    for lbr in [0, 1]:
        for d in ["forward", "reverse", "bidirectional"]:
            add(Case("gru_lbr%d_%s" % (lbr, d), "GRU", direction=d,
                     attrs={"linear_before_reset": lbr}, inputs=("B", "initial_h")))
        add(Case("gru_lbr%d_bidirectional_seqlens" % lbr, "GRU", T=5, N=4, I=5, H=7,
                 direction="bidirectional", attrs={"linear_before_reset": lbr},
                 inputs=("B", "initial_h"), lens=[5, 0, 3, 1]))
        add(Case("gru_lbr%d_clip" % lbr, "GRU", attrs={"linear_before_reset": lbr, "clip": 0.5},
                 inputs=("B", "initial_h")))
    add(Case("gru_lbr1_no_bias", "GRU", attrs={"linear_before_reset": 1}, inputs=()))
    add(Case("gru_lbr1_opset3", "GRU", opset=3, attrs={"linear_before_reset": 1},
             inputs=("B", "initial_h")))
    add(Case("gru_lbr1_layout1_seqlens", "GRU", attrs={"linear_before_reset": 1, "layout": 1},
             direction="reverse", inputs=("B", "initial_h"), lens=[3, 1]))
    add(Case("gru_lbr1_float64_bidirectional", "GRU", attrs={"linear_before_reset": 1},
             direction="bidirectional", inputs=("B", "initial_h"), dtype=np.float64))
    names = [c.name for c in out]
    assert len(names) == len(set(names)), "duplicate case names"
    return out


def seed_of(name):
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "little")


def nonzero_normal(rng, shape, scale, dtype):
    v = rng.standard_normal(shape) * scale
    v[v == 0] = 0.5 * scale
    v = v.astype(dtype)
    v[v == 0] = np.asarray(0.5 * scale, dtype=dtype)  # float16 can round tiny values to 0
    return v


def build(case):
    rng = np.random.default_rng(seed_of(case.name))
    op, T, N, I, H = case.op, case.T, case.N, case.I, case.H
    D = 2 if case.direction == "bidirectional" else 1
    G = GATES[op]
    layout = case.attrs.get("layout", 0)
    dt = case.dtype
    values = {
        "X": nonzero_normal(rng, (T, N, I) if layout == 0 else (N, T, I), case.x_scale, dt),
        "W": nonzero_normal(rng, (D, G * H, I), 0.5, dt),
        "R": nonzero_normal(rng, (D, G * H, H), 0.5, dt),
    }
    state = (D, N, H) if layout == 0 else (N, D, H)
    if "B" in case.inputs:
        values["B"] = nonzero_normal(rng, (D, 2 * G * H), 0.5, dt)
    if "sequence_lens" in case.inputs:
        values["sequence_lens"] = np.array(case.lens, dtype=np.int32)
    if "initial_h" in case.inputs:
        values["initial_h"] = nonzero_normal(rng, state, 0.5, dt)
    if "initial_c" in case.inputs and op == "LSTM":
        values["initial_c"] = nonzero_normal(rng, state, 0.5, dt)
    if "P" in case.inputs and op == "LSTM":
        values["P"] = nonzero_normal(rng, (D, 3 * H), 0.5, dt)

    order = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]
    node_inputs = [n if n in values else "" for n in order]
    while node_inputs and node_inputs[-1] == "":
        node_inputs.pop()
    out_names = ["Y", "Y_h", "Y_c"] if op == "LSTM" else ["Y", "Y_h"]
    node_outputs = [n if n in case.outputs else "" for n in out_names]
    while node_outputs and node_outputs[-1] == "":
        node_outputs.pop()

    attrs = dict(case.attrs)
    if case.hidden_attr:
        attrs["hidden_size"] = H
    if case.direction != "forward":
        attrs["direction"] = case.direction
    node = helper.make_node(op, node_inputs, node_outputs, name=case.name, **attrs)

    weight_names = {"W", "R", "B", "P"}
    graph_inputs, initializers, feeds = [], [], []
    for n in order:
        if n not in values:
            continue
        v = values[n]
        if n in weight_names and case.weights == "init":
            initializers.append(numpy_helper.from_array(v, n))
        else:
            graph_inputs.append(helper.make_tensor_value_info(n, NP_TO_ONNX[v.dtype.type],
                                                              list(v.shape)))
            feeds.append((n, v))

    oracle_inputs = [values.get(n) for n in order]
    got = rnn_oracle.run_node(node, oracle_inputs)
    results = dict(zip(out_names, got))
    graph_outputs = []
    expected = []
    for n in node_outputs:
        if not n:
            continue
        graph_outputs.append(helper.make_tensor_value_info(n, NP_TO_ONNX[dt],
                                                           list(results[n].shape)))
        expected.append((n, results[n]))
    graph = helper.make_graph([node], case.name, graph_inputs, graph_outputs, initializers)
    model = helper.make_model(graph, producer_name="recur/tools/gen_rnn_tests.py",
                              opset_imports=[helper.make_opsetid("", case.opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, feeds, expected


def write_case(root, case):
    model, feeds, expected = build(case)
    write_test_folder(os.path.join(root, case.name), model, feeds, expected)


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(repo, "tests", "data", "rnn"))
    ap.add_argument("--list", action="store_true", help="print the case names and exit")
    args = ap.parse_args()
    all_cases = cases()
    if args.list:
        for c in all_cases:
            print(c.name)
        return 0
    os.makedirs(args.out, exist_ok=True)
    wanted = {c.name for c in all_cases}
    for entry in os.listdir(args.out):
        p = os.path.join(args.out, entry)
        if os.path.isdir(p) and entry not in wanted:
            shutil.rmtree(p)
    for c in all_cases:
        write_case(args.out, c)
    total = 0
    for dirpath, _, files in os.walk(args.out):
        total += sum(os.path.getsize(os.path.join(dirpath, f)) for f in files)
    print("wrote %d cases to %s (%.1f KiB)" % (len(all_cases), args.out, total / 1024.0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
