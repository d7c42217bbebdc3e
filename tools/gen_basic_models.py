#!/usr/bin/python3
"""Writes the basic recurrent models under models/ in backend-test layout (model.onnx and
test_data_set_0 with input_K.pb / output_K.pb). Expected outputs come from the float64 numpy
oracle (tools/rnn_oracle.py). Batch and sequence dimensions are symbolic.

  models/lstm_basic      one forward LSTM (weights as initializers), outputs Y, Y_h, Y_c
  models/gru_basic       one forward GRU with linear_before_reset=1 (as PyTorch exports it)
                         and an initial_h input, outputs Y, Y_h
  models/bilstm_seqlens  a bidirectional LSTM with a sequence_lens input, outputs Y, Y_h, Y_c

Usage: /usr/bin/python3 tools/gen_basic_models.py [--out models]
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnn_oracle  # noqa: E402
from test_folder import write_test_folder  # noqa: E402


def init_uniform(rng, shape, hidden):
    # PyTorch's default RNN initialisation: U(-1/sqrt(H), 1/sqrt(H)).
    k = 1.0 / np.sqrt(hidden)
    return rng.uniform(-k, k, shape).astype(np.float32)


def save(root, name, nodes, inputs, outputs, initializers, feeds, expected):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializers)
    model = helper.make_model(graph, producer_name="recur/tools/gen_basic_models.py",
                              opset_imports=[helper.make_opsetid("", 14)])
    model.ir_version = 8
    write_test_folder(os.path.join(root, name), model, feeds, expected)


def lstm_basic(root):
    rng = np.random.default_rng(101)
    T, N, I, H = 8, 3, 10, 20
    W = init_uniform(rng, (1, 4 * H, I), H)
    R = init_uniform(rng, (1, 4 * H, H), H)
    B = init_uniform(rng, (1, 8 * H), H)
    X = rng.standard_normal((T, N, I)).astype(np.float32)
    node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], name="lstm",
                            hidden_size=H)
    Y, Y_h, Y_c = rnn_oracle.run_node(node, [X, W, R, B])
    f = TensorProto.FLOAT
    save(root, "lstm_basic", [node],
         [helper.make_tensor_value_info("X", f, ["seq", "batch", I])],
         [helper.make_tensor_value_info("Y", f, ["seq", 1, "batch", H]),
          helper.make_tensor_value_info("Y_h", f, [1, "batch", H]),
          helper.make_tensor_value_info("Y_c", f, [1, "batch", H])],
         [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"),
          numpy_helper.from_array(B, "B")],
         [("X", X)], [("Y", Y), ("Y_h", Y_h), ("Y_c", Y_c)])


def gru_basic(root):
    rng = np.random.default_rng(202)
    T, N, I, H = 8, 3, 10, 20
    W = init_uniform(rng, (1, 3 * H, I), H)
    R = init_uniform(rng, (1, 3 * H, H), H)
    B = init_uniform(rng, (1, 6 * H), H)
    X = rng.standard_normal((T, N, I)).astype(np.float32)
    h0 = (0.5 * rng.standard_normal((1, N, H))).astype(np.float32)
    node = helper.make_node("GRU", ["X", "W", "R", "B", "", "initial_h"], ["Y", "Y_h"],
                            name="gru", hidden_size=H, linear_before_reset=1)
    Y, Y_h = rnn_oracle.run_node(node, [X, W, R, B, None, h0])
    f = TensorProto.FLOAT
    save(root, "gru_basic", [node],
         [helper.make_tensor_value_info("X", f, ["seq", "batch", I]),
          helper.make_tensor_value_info("initial_h", f, [1, "batch", H])],
         [helper.make_tensor_value_info("Y", f, ["seq", 1, "batch", H]),
          helper.make_tensor_value_info("Y_h", f, [1, "batch", H])],
         [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"),
          numpy_helper.from_array(B, "B")],
         [("X", X), ("initial_h", h0)], [("Y", Y), ("Y_h", Y_h)])


def bilstm_seqlens(root):
    rng = np.random.default_rng(303)
    T, N, I, H = 8, 4, 10, 16
    W = init_uniform(rng, (2, 4 * H, I), H)
    R = init_uniform(rng, (2, 4 * H, H), H)
    B = init_uniform(rng, (2, 8 * H), H)
    X = rng.standard_normal((T, N, I)).astype(np.float32)
    lens = np.array([8, 5, 2, 7], dtype=np.int32)
    # Padding past each length is garbage that must not leak into the results.
    for n, L in enumerate(lens):
        X[L:, n] = 100.0
    node = helper.make_node("LSTM", ["X", "W", "R", "B", "sequence_lens"], ["Y", "Y_h", "Y_c"],
                            name="bilstm", hidden_size=H, direction="bidirectional")
    Y, Y_h, Y_c = rnn_oracle.run_node(node, [X, W, R, B, lens])
    f = TensorProto.FLOAT
    save(root, "bilstm_seqlens", [node],
         [helper.make_tensor_value_info("X", f, ["seq", "batch", I]),
          helper.make_tensor_value_info("sequence_lens", TensorProto.INT32, ["batch"])],
         [helper.make_tensor_value_info("Y", f, ["seq", 2, "batch", H]),
          helper.make_tensor_value_info("Y_h", f, [2, "batch", H]),
          helper.make_tensor_value_info("Y_c", f, [2, "batch", H])],
         [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R"),
          numpy_helper.from_array(B, "B")],
         [("X", X), ("sequence_lens", lens)], [("Y", Y), ("Y_h", Y_h), ("Y_c", Y_c)])


def main():
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(repo, "models"))
    args = ap.parse_args()
    for make in (lstm_basic, gru_basic, bilstm_seqlens):
        make(args.out)
        print("wrote", os.path.join(args.out, make.__name__))
    return 0


if __name__ == "__main__":
    sys.exit(main())
