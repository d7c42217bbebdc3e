"""Writes an ONNX backend-test folder: model.onnx and test_data_set_0/{input,output}_K.pb.
Shared by the generators of models/ and tests/data/ (gen_basic_models.py, gen_rnn_tests.py,
gen_ml_tests.py)."""
import os
import shutil

import numpy as np
import onnx
from onnx import numpy_helper


def map_proto(d, name=""):
    """A MapProto of a dict with int or str keys and scalar values (one single-element tensor
    per value), as ONNX's backend tests store maps."""
    m = onnx.MapProto()
    m.name = name
    keys = list(d)
    if all(isinstance(k, str) for k in keys):
        m.key_type = onnx.TensorProto.STRING
        m.string_keys.extend(k.encode() for k in keys)
    else:
        m.key_type = onnx.TensorProto.INT64
        m.keys.extend(int(k) for k in keys)
    m.values.elem_type = onnx.SequenceProto.TENSOR
    for k in keys:
        m.values.tensor_values.append(numpy_helper.from_array(np.asarray(d[k])))
    return m


def value_proto(v, name):
    """A TensorProto for an array, a MapProto for a dict, a SequenceProto of maps for a list of
    dicts."""
    if isinstance(v, dict):
        return map_proto(v, name)
    if isinstance(v, list) and all(isinstance(e, dict) for e in v):
        s = onnx.SequenceProto()
        s.name = name
        s.elem_type = onnx.SequenceProto.MAP
        for e in v:
            s.map_values.append(map_proto(e))
        return s
    return numpy_helper.from_array(v, name)


def write_test_folder(d, model, feeds, expected, more_sets=()):
    """Replaces folder `d`; feeds and expected are lists of (name, value), a value being a numpy
    array, a dict (a map) or a list of dicts (a sequence of maps). more_sets holds further
    (feeds, expected) pairs, written as test_data_set_1, 2, ..."""
    onnx.checker.check_model(model)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    onnx.save(model, os.path.join(d, "model.onnx"))
    for i, (set_feeds, set_expected) in enumerate([(feeds, expected)] + list(more_sets)):
        ds = os.path.join(d, "test_data_set_%d" % i)
        os.makedirs(ds)
        for kind, values in (("input", set_feeds), ("output", set_expected)):
            for k, (n, v) in enumerate(values):
                with open(os.path.join(ds, "%s_%d.pb" % (kind, k)), "wb") as f:
                    f.write(value_proto(v, n).SerializeToString())
