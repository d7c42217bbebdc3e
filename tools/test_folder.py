"""Writes an ONNX backend-test folder: model.onnx and test_data_set_0/{input,output}_K.pb.
Shared by the generators of models/ and tests/data/ (gen_basic_models.py, gen_rnn_tests.py,
gen_ml_tests.py)."""
import os
import shutil

import onnx
from onnx import numpy_helper


def write_test_folder(d, model, feeds, expected):
    """Replaces folder `d`; feeds and expected are lists of (name, numpy array)."""
    onnx.checker.check_model(model)
    shutil.rmtree(d, ignore_errors=True)
    ds = os.path.join(d, "test_data_set_0")
    os.makedirs(ds)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for kind, values in (("input", feeds), ("output", expected)):
        for k, (n, v) in enumerate(values):
            with open(os.path.join(ds, "%s_%d.pb" % (kind, k)), "wb") as f:
                f.write(numpy_helper.from_array(v, n).SerializeToString())
