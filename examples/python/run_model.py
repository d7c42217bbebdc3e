#!/usr/bin/env python3
"""Runs a model folder of models/ (model.onnx + test_data_set_0) with recur and compares with
the expected outputs there, the way one would with onnxruntime: only the import differs.

    python3 examples/python/run_model.py models/char_lstm_lm [--explain]
"""
import os
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

import recur as ort  # was: import onnxruntime as ort


def load(path):
    t = TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def main():
    if len(sys.argv) < 2:
        sys.exit("usage: run_model.py MODEL_DIR [--explain]")
    folder = sys.argv[1]
    sess = ort.InferenceSession(os.path.join(folder, "model.onnx"),
                                providers=["CPUExecutionProvider"])
    for i in sess.get_inputs():
        print("input ", i.name, i.type, i.shape)
    for o in sess.get_outputs():
        print("output", o.name, o.type, o.shape)

    data = os.path.join(folder, "test_data_set_0")
    feeds = dict(load(os.path.join(data, f)) for f in sorted(os.listdir(data))
                 if f.startswith("input_"))
    expected = dict(load(os.path.join(data, f)) for f in sorted(os.listdir(data))
                    if f.startswith("output_"))
    names = [o.name for o in sess.get_outputs()]
    all_ok = True
    for name, got in zip(names, sess.run(None, feeds)):
        err = float(np.max(np.abs(got - expected[name])))
        ok = np.allclose(got, expected[name], rtol=1e-3, atol=1e-5)
        all_ok = all_ok and ok
        print("%s: %s %s, max |got - PyTorch| = %.3g %s" % (name, got.dtype, list(got.shape), err,
                                                             "ok" if ok else "MISMATCH"))
    if "--explain" in sys.argv:
        print(sess.explain())
    return 0 if all_ok else 1


if __name__ == "__main__":
    sys.exit(main())
