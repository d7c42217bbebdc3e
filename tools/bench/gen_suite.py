#!/usr/bin/python3
"""Writes the standard benchmark suite (docs/benchmarking.md): one ONNX model per case
(a single LSTM/GRU/RNN node, fp32, random weights of scale 0.1) in backend-test layout, plus the
input as raw float32 for the ONNX Runtime driver.

  /usr/bin/python3 tools/bench/gen_suite.py OUT_DIR

OUT_DIR/<case>/model.onnx, OUT_DIR/<case>/test_data_set_0/input_0.pb, and the same input as
raw little-endian data for the ONNX Runtime driver (OUT_DIR/<case>/feeds.json naming X.bin).
The folder is not for git.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

# name, op, T, N, I, H, extra attributes, peepholes, directions
SUITE = [
    ("lstm_stream", "LSTM", 50, 1, 64, 128, {}, False, 1),
    ("lstm_med", "LSTM", 100, 32, 256, 512, {}, False, 1),
    ("lstm_large", "LSTM", 100, 64, 1024, 1024, {}, False, 1),
    ("gru_lbr1", "GRU", 100, 32, 256, 512, {"linear_before_reset": 1}, False, 1),
    ("gru_lbr0", "GRU", 100, 32, 256, 512, {}, False, 1),
    ("bilstm", "LSTM", 100, 16, 128, 256, {"direction": "bidirectional"}, False, 2),
    ("lstm_peep", "LSTM", 100, 32, 256, 512, {}, True, 1),
    ("rnn_tanh", "RNN", 100, 32, 256, 512, {}, False, 1),
]

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def make_case(out_dir, name, op, T, N, I, H, attrs, peep, D, seed):
    rng = np.random.default_rng(seed)
    G = GATES[op]
    w = (0.1 * rng.standard_normal((D, G * H, I))).astype(np.float32)
    r = (0.1 * rng.standard_normal((D, G * H, H))).astype(np.float32)
    b = (0.1 * rng.standard_normal((D, 2 * G * H))).astype(np.float32)
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array(b, "B")]
    inputs = ["X", "W", "R", "B"]
    if peep:
        p = (0.1 * rng.standard_normal((D, 3 * H))).astype(np.float32)
        inits.append(numpy_helper.from_array(p, "P"))
        inputs += ["", "", "", "P"]
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    node = helper.make_node(op, inputs, outputs, name=name, hidden_size=H, **attrs)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, [T, N, I])],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [T, D, N, H]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [D, N, H])] +
        ([helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [D, N, H])]
         if op == "LSTM" else []),
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="recur-bench")
    model.ir_version = 7  # ONNX Runtime 1.30 and onnx 1.12 both read it
    onnx.checker.check_model(model)
    case_dir = os.path.join(out_dir, name)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"), exist_ok=True)
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    x = rng.standard_normal((T, N, I)).astype(np.float32)
    with open(os.path.join(case_dir, "test_data_set_0", "input_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(x, "X").SerializeToString())
    write_feeds(case_dir, [("X", x)])


def write_feeds(out_dir, named_arrays):
    """feeds.json and one raw .bin per input, for tools/bench/ort_perf.js."""
    types = {"float32": "float32", "int32": "int32", "int64": "int64", "float64": "float64"}
    feeds = []
    for k, (name, a) in enumerate(named_arrays):
        f = "input_%d.bin" % k
        a.astype(a.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, f))
        feeds.append({"name": name, "type": types[str(a.dtype)], "shape": list(a.shape),
                      "file": f})
    with open(os.path.join(out_dir, "feeds.json"), "w") as fh:
        json.dump(feeds, fh)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    out_dir = sys.argv[1]
    for seed, case in enumerate(SUITE):
        make_case(out_dir, *case, seed=seed)
        print("wrote", os.path.join(out_dir, case[0]))


if __name__ == "__main__":
    main()
