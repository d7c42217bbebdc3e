#!/usr/bin/python3
"""Writes the int8 test cases under tests/data/int8/<case>/ in ONNX backend-test layout:
model.onnx (one com.microsoft DynamicQuantizeLSTM node, or one float LSTM node) and
test_data_set_0/input_K.pb, output_K.pb. The expected outputs come from ONNX Runtime (CPU, one
thread) through onnxruntime-node (tools/ort_oracle.py), never from recur.

The quantized models are written the way ONNX Runtime's quantize_dynamic writes an LSTM
(quantize_lstm below, also used by tools/bench/int8_bench.py): W and R transposed to
[D, K, 4H] and quantized to int8 symmetrically (zero point 0), with one scale per output
column (per-channel, [D, 4H]) or per direction ([D]).

Usage: /usr/bin/python3 tools/gen_int8_tests.py [--out tests/data/int8]
Needs node and onnxruntime-node in ~/.cache/recur-bench/ort/node_modules (tools/recur-bench
installs it) or NODE_PATH.
"""

import argparse
import os
import shutil

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import ort_outputs

HERE = os.path.dirname(os.path.abspath(__file__))


def quantize_weight(w, per_channel, dtype=np.int8):
    """w [D, 4H, K] float -> (q [D, K, 4H], scale, zero_point) as quantize_dynamic writes them."""
    wt = np.ascontiguousarray(np.transpose(w, (0, 2, 1)))  # [D, K, 4H]
    if per_channel:
        amax = np.abs(wt).max(axis=1)  # [D, 4H]
        scale = (np.maximum(amax, 1e-8) / 127.0).astype(np.float32)
        q = np.clip(np.rint(wt / scale[:, None, :]), -127, 127)
    else:
        amax = np.abs(wt).reshape(wt.shape[0], -1).max(axis=1)  # [D]
        scale = (np.maximum(amax, 1e-8) / 127.0).astype(np.float32)
        q = np.clip(np.rint(wt / scale[:, None, None]), -127, 127)
    if dtype == np.uint8:  # asymmetric uint8 is written with zero point 128
        zp = np.full(scale.shape, 128, np.uint8)
        return (q + 128).astype(np.uint8), scale, zp
    return q.astype(np.int8), scale, np.zeros(scale.shape, np.int8)


def quantize_lstm(name, x_shape, w, r, b, H, direction, per_channel=True, extra_inputs=None,
                  weight_dtype=np.int8):
    """A model of one DynamicQuantizeLSTM node with W and R quantized from float w and r
    ([D, 4H, I], [D, 4H, H] as in ONNX's LSTM). extra_inputs maps 'sequence_lens',
    'initial_h', 'initial_c' to (dtype, shape) graph inputs."""
    D = w.shape[0]
    T, N, _ = x_shape
    qw, sw, zw = quantize_weight(w, per_channel, weight_dtype)
    qr, sr, zr = quantize_weight(r, per_channel, weight_dtype)
    inits = [numpy_helper.from_array(qw, "W"), numpy_helper.from_array(qr, "R"),
             numpy_helper.from_array(b, "B"), numpy_helper.from_array(sw, "W_scale"),
             numpy_helper.from_array(zw, "W_zero_point"), numpy_helper.from_array(sr, "R_scale"),
             numpy_helper.from_array(zr, "R_zero_point")]
    extra_inputs = extra_inputs or {}
    names = ["X", "W", "R", "B"] + [k if k in extra_inputs else "" for k in
                                    ("sequence_lens", "initial_h", "initial_c")]
    names += ["", "W_scale", "W_zero_point", "R_scale", "R_zero_point"]
    node = helper.make_node("DynamicQuantizeLSTM", names, ["Y", "Y_h", "Y_c"], name=name,
                            domain="com.microsoft", hidden_size=H, direction=direction)
    graph_inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))]
    for k, (dt, shape) in extra_inputs.items():
        graph_inputs.append(helper.make_tensor_value_info(k, dt, shape))
    graph = helper.make_graph(
        [node], name, graph_inputs,
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [T, D, N, H]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [D, N, H]),
         helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [D, N, H])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                    helper.make_opsetid("com.microsoft", 1)],
                              producer_name="recur-int8")
    model.ir_version = 7
    return model


def float_lstm(name, x_shape, w, r, b, H, direction):
    D = w.shape[0]
    T, N, _ = x_shape
    inits = [numpy_helper.from_array(w, "W"), numpy_helper.from_array(r, "R"),
             numpy_helper.from_array(b, "B")]
    node = helper.make_node("LSTM", ["X", "W", "R", "B"], ["Y", "Y_h", "Y_c"], name=name,
                            hidden_size=H, direction=direction)
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("X", TensorProto.FLOAT, list(x_shape))],
        [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [T, D, N, H]),
         helper.make_tensor_value_info("Y_h", TensorProto.FLOAT, [D, N, H]),
         helper.make_tensor_value_info("Y_c", TensorProto.FLOAT, [D, N, H])],
        initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)],
                              producer_name="recur-int8")
    model.ir_version = 7
    return model


# name, T, N, I, H, direction, per_channel, extra inputs, weight dtype, x scale, quantized
# (and optionally the scale of initial_h and initial_c, 0.5 by default)
CASES = [
    ("dqlstm_forward", 6, 1, 5, 8, "forward", True, (), np.int8, 1.0, True),
    ("dqlstm_batch3", 7, 3, 6, 5, "forward", True, (), np.int8, 2.0, True),
    ("dqlstm_reverse_per_tensor", 5, 2, 4, 6, "reverse", False, (), np.int8, 1.0, True),
    ("dqlstm_bidirectional_state", 5, 2, 4, 6, "bidirectional", True,
     ("initial_h", "initial_c"), np.int8, 0.5, True),
    ("dqlstm_uint8_weights", 4, 1, 3, 4, "forward", True, (), np.uint8, 1.0, True),
    ("dqlstm_seqlens", 6, 3, 4, 5, "bidirectional", True, ("sequence_lens",), np.int8, 1.0,
     True),
    ("lstm_fp32_bidirectional", 9, 4, 16, 32, "bidirectional", False, (), np.int8, 1.0, False),
    # initial_h well beyond [-1, 1] (an encoder's projection fed to a decoder): oneDNN's int8
    # LSTM quantizes h for [-1, 1] and runs such rows' first step in float32.
    ("dqlstm_initial_h_large", 6, 3, 4, 6, "bidirectional", True, ("initial_h", "initial_c"),
     np.int8, 1.0, True, 3.0),
]


def make_case(out_dir, seed, name, T, N, I, H, direction, per_channel, extra, wdt, x_scale,
              quantized, state_scale=0.5):
    rng = np.random.default_rng(1000 + seed)
    D = 2 if direction == "bidirectional" else 1
    w = (0.3 * rng.standard_normal((D, 4 * H, I))).astype(np.float32)
    r = (0.3 * rng.standard_normal((D, 4 * H, H))).astype(np.float32)
    b = (0.1 * rng.standard_normal((D, 8 * H))).astype(np.float32)
    feeds = [("X", (x_scale * rng.standard_normal((T, N, I))).astype(np.float32))]
    extra_inputs = {}
    for k in extra:
        if k == "sequence_lens":
            extra_inputs[k] = (TensorProto.INT32, [N])
            feeds.append((k, np.array([T, 2, T - 1][:N], np.int32)))
            continue
        extra_inputs[k] = (TensorProto.FLOAT, [D, N, H])
        feeds.append((k, (state_scale * rng.standard_normal((D, N, H))).astype(np.float32)))
    if quantized:
        model = quantize_lstm(name, (T, N, I), w, r, b, H, direction, per_channel, extra_inputs,
                              wdt)
    else:
        model = float_lstm(name, (T, N, I), w, r, b, H, direction)
    case_dir = os.path.join(out_dir, name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    onnx.save(model, os.path.join(case_dir, "model.onnx"))
    for k, (fname, a) in enumerate(feeds):
        with open(os.path.join(case_dir, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, fname).SerializeToString())
    return case_dir, feeds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "int8"))
    args = ap.parse_args()
    tests = [make_case(args.out, seed, *case) for seed, case in enumerate(CASES)]
    for (case_dir, _), outs in zip(tests, ort_outputs(tests)):
        for k, name in enumerate(("Y", "Y_h", "Y_c")):
            with open(os.path.join(case_dir, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
                f.write(numpy_helper.from_array(outs[name], name).SerializeToString())
        print("wrote", os.path.relpath(case_dir))


if __name__ == "__main__":
    main()
