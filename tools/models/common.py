"""Shared helpers for the models/ export scripts.

Every model is exported with torch.onnx.export from a seeded PyTorch module, and its expected
outputs come from PyTorch itself: the same module run eagerly in float64 on the same inputs
(float32 eager is checked against it, so an export of a model that behaves differently in the
two precisions fails here rather than in recur's tests). Run with /usr/bin/python3 (Debian's
python3-torch 1.13, onnx 1.12).
"""

import copy
import os
import shutil
import warnings

import numpy as np
import onnx
import torch
from onnx import numpy_helper

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MODELS_DIR = os.path.join(REPO_ROOT, "models")

# The exporter warns about every LSTM with batch > 1 and about prim::Constant shape inference;
# neither applies to these models (their initial states are built from Shape at run time).
warnings.filterwarnings("ignore", category=UserWarning)


def seed(value):
    torch.manual_seed(value)
    np.random.seed(value)
    return np.random.default_rng(value)


def fresh_dir(name, root=None):
    """models/<name>, emptied: a re-export never leaves stale data sets behind."""
    path = os.path.join(root or MODELS_DIR, name)
    if os.path.isdir(path):
        shutil.rmtree(path)
    os.makedirs(path)
    return path


def export(model, args, path, input_names, output_names, opset, dynamic_axes=None, **kwargs):
    model.eval()
    with torch.no_grad():
        torch.onnx.export(model, args, path, input_names=input_names, output_names=output_names,
                          opset_version=opset, dynamic_axes=dynamic_axes,
                          do_constant_folding=True, **kwargs)
    m = onnx.load(path)
    onnx.checker.check_model(m)
    # Exporter-generated names carry no meaning; fixed values keep the files byte-stable.
    m.producer_version = torch.__version__.split("+")[0]
    onnx.save(m, path)
    return m


def to_tensor(a):
    a = np.asarray(a)
    if a.dtype.kind == "f":
        return torch.from_numpy(np.ascontiguousarray(a))
    return torch.from_numpy(np.ascontiguousarray(a))


def run_eager(model, inputs, check_f32=True, rtol=1e-4, atol=1e-5):
    """Runs `model` eagerly on numpy `inputs` (a list) in float64 and returns numpy outputs cast
    to the dtypes that the float32 model produces. Float32 eager must agree."""
    model.eval()
    m64 = copy.deepcopy(model).double()
    with torch.no_grad():
        args64 = [to_tensor(a.astype(np.float64) if a.dtype == np.float32 else a) for a in inputs]
        out64 = m64(*args64)
        out32 = model(*[to_tensor(a) for a in inputs])
    if not isinstance(out64, (tuple, list)):
        out64, out32 = (out64,), (out32,)
    out = []
    for o64, o32 in zip(out64, out32):
        o64 = o64.numpy()
        o32 = o32.numpy()
        if check_f32:
            np.testing.assert_allclose(o32, o64, rtol=rtol, atol=atol)
        out.append(o64.astype(o32.dtype))
    return out


def write_data_set(model_dir, index, names_in, inputs, names_out, outputs):
    d = os.path.join(model_dir, "test_data_set_%d" % index)
    os.makedirs(d, exist_ok=True)
    assert len(names_in) == len(inputs) and len(names_out) == len(outputs)
    for k, (n, a) in enumerate(zip(names_in, inputs)):
        write_tensor(os.path.join(d, "input_%d.pb" % k), a, n)
    for k, (n, a) in enumerate(zip(names_out, outputs)):
        write_tensor(os.path.join(d, "output_%d.pb" % k), a, n)


def write_tensor(path, array, name):
    # Not np.ascontiguousarray: it turns a scalar (vad_streaming's sr) into shape [1].
    t = numpy_helper.from_array(np.asarray(array, order="C"), name)
    with open(path, "wb") as f:
        f.write(t.SerializeToString())


def check_with_onnx_shapes(model_path):
    """Static shape inference must accept the exported model."""
    onnx.shape_inference.infer_shapes(onnx.load(model_path), strict_mode=True)


def summary(model_path):
    m = onnx.load(model_path)
    ops = {}
    for n in m.graph.node:
        ops[n.op_type] = ops.get(n.op_type, 0) + 1
    opset = [o.version for o in m.opset_import if o.domain in ("", "ai.onnx")][0]
    return opset, ops, os.path.getsize(model_path)
