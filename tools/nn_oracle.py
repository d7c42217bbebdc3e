#!/usr/bin/python3
"""Writes single-node test folders (model.onnx + test_data_set_0) for the nn/ and quant/
reference kernels into tests/data/nn, with expected outputs from PyTorch and numpy (float64).

They cover what the ONNX backend node tests leave out: old opsets (BatchNormalization 1/7,
Gemm 6 broadcast, MaxPool 1/8/10, AveragePool 7/10, Upsample 7/9, Resize 10/11, LpPool 1),
groups, dilations and 1-D/3-D convolutions, integer and float16 types, Einsum forms, and
GridSample's padding modes out of range.

Run with /usr/bin/python3 (numpy, torch, onnx 1.12): /usr/bin/python3 tools/nn_oracle.py
"""
import os
import shutil
import sys

import numpy as np
import onnx
import torch
import torch.nn.functional as F
from onnx import helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "nn")
rng = np.random.default_rng(20240611)


def write_case(name, opset, op, inputs, outputs, attrs=None, input_names=None):
    """inputs/outputs: lists of (name, array); an input name of "" is an omitted input."""
    d = os.path.join(ROOT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    node_inputs = [n for n, _ in inputs]
    node = helper.make_node(op, node_inputs, [n for n, _ in outputs], name=name, **(attrs or {}))
    def vi(n, a):
        return helper.make_tensor_value_info(n, onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[np.dtype(a.dtype)], a.shape)
    graph = helper.make_graph([node], name, [vi(n, a) for n, a in inputs if n],
                              [vi(n, a) for n, a in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 7
    onnx.save(model, os.path.join(d, "model.onnx"))
    k = 0
    for n, a in inputs:
        if not n:
            continue
        t = numpy_helper.from_array(a, n)
        open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb").write(t.SerializeToString())
        k += 1
    for k, (n, a) in enumerate(outputs):
        t = numpy_helper.from_array(a, n)
        open(os.path.join(d, "test_data_set_0", "output_%d.pb" % k), "wb").write(t.SerializeToString())


def randn(*shape, dtype=np.float32):
    return rng.standard_normal(shape).astype(dtype)


def t64(a):
    return torch.from_numpy(np.asarray(a, dtype=np.float64))


# --- Convolution ------------------------------------------------------------------------

CONV = {1: F.conv1d, 2: F.conv2d, 3: F.conv3d}
CONVT = {1: F.conv_transpose1d, 2: F.conv_transpose2d, 3: F.conv_transpose3d}


def conv_ref(x, w, b, strides, pads, dilations, group):
    r = x.ndim - 2
    pad = []
    for i in reversed(range(r)):  # F.pad takes the last dimension first
        pad += [pads[i], pads[i + r]]
    xp = F.pad(t64(x), pad)
    y = CONV[r](xp, t64(w), None if b is None else t64(b), stride=strides, dilation=dilations,
                groups=group)
    return y.numpy().astype(x.dtype)


def same_pads(in_sp, k, s, d, lower):
    pb, pe = [], []
    for i in range(len(in_sp)):
        out = -(-in_sp[i] // s[i])
        total = max(0, (out - 1) * s[i] + (k[i] - 1) * d[i] + 1 - in_sp[i])
        small, big = total // 2, total - total // 2
        pb.append(big if lower else small)
        pe.append(small if lower else big)
    return pb + pe


def conv_cases():
    # 1-D with stride, dilation and asymmetric pads (opset 1).
    x, w, b = randn(2, 4, 11), randn(6, 4, 3), randn(6)
    a = dict(strides=[2], pads=[1, 2], dilations=[2])
    write_case("conv_1d_opset1", 1, "Conv", [("x", x), ("w", w), ("b", b)],
               [("y", conv_ref(x, w, b, [2], [1, 2], [2], 1))], a)
    # 2-D groups + dilation + SAME_LOWER.
    x, w = randn(1, 6, 7, 8), randn(9, 2, 3, 2)
    pads = same_pads([7, 8], [3, 2], [2, 1], [1, 2], lower=True)
    write_case("conv_2d_group_same_lower", 11, "Conv", [("x", x), ("w", w)],
               [("y", conv_ref(x, w, None, [2, 1], pads, [1, 2], 3))],
               dict(group=3, strides=[2, 1], dilations=[1, 2], auto_pad="SAME_LOWER"))
    # 3-D depthwise, VALID.
    x, w, b = randn(1, 3, 5, 6, 4), randn(3, 1, 2, 3, 2), randn(3)
    write_case("conv_3d_depthwise_valid", 11, "Conv", [("x", x), ("w", w), ("b", b)],
               [("y", conv_ref(x, w, b, [1, 2, 1], [0] * 6, [1, 1, 1], 3))],
               dict(group=3, strides=[1, 2, 1], auto_pad="VALID"))
    # float64 and float16 2-D.
    x, w, b = randn(2, 3, 5, 5, dtype=np.float64), randn(4, 3, 3, 3, dtype=np.float64), randn(4, dtype=np.float64)
    write_case("conv_2d_float64", 11, "Conv", [("x", x), ("w", w), ("b", b)],
               [("y", conv_ref(x, w, b, [1, 1], [1, 1, 1, 1], [1, 1], 1))], dict(pads=[1, 1, 1, 1]))
    x, w = randn(1, 2, 4, 4).astype(np.float16), (0.5 * randn(2, 2, 3, 3)).astype(np.float16)
    y = conv_ref(x.astype(np.float64), w.astype(np.float64), None, [1, 1], [0] * 4, [1, 1], 1)
    write_case("conv_2d_float16", 11, "Conv", [("x", x), ("w", w)], [("y", y.astype(np.float16))])


def convt_ref(x, w, b, strides, pads, dilations, group, output_padding):
    r = x.ndim - 2
    full = CONVT[r](t64(x), t64(w), None, stride=strides, groups=group, dilation=dilations).numpy()
    out = []
    for i in range(r):
        out.append(full.shape[2 + i] + output_padding[i] - pads[i] - pads[i + r])
    y = np.zeros(full.shape[:2] + tuple(out))
    src = [slice(None), slice(None)]
    dst = [slice(None), slice(None)]
    for i in range(r):
        lo = pads[i]
        hi = min(full.shape[2 + i], lo + out[i])
        src.append(slice(lo, hi))
        dst.append(slice(0, hi - lo))
    y[tuple(dst)] = full[tuple(src)]
    if b is not None:
        y += np.asarray(b, np.float64).reshape((1, -1) + (1,) * r)
    return y.astype(x.dtype)


def conv_transpose_cases():
    x, w, b = randn(2, 4, 3, 4), randn(4, 3, 3, 2), randn(6)
    write_case("convtranspose_2d_group_pads_outpad", 11, "ConvTranspose",
               [("x", x), ("w", w), ("b", b)],
               [("y", convt_ref(x, w, b, [2, 3], [1, 0, 0, 1], [1, 2], 2, [1, 2]))],
               dict(group=2, strides=[2, 3], pads=[1, 0, 0, 1], dilations=[1, 2],
                    output_padding=[1, 2]))
    # output_shape one larger than the natural size: total padding -1 puts the extra zero at
    # the end, as output_padding=1 would.
    x, w = randn(1, 2, 3), randn(2, 2, 3)
    y = convt_ref(x, w, None, [2], [0, 0], [1], 1, [1])
    write_case("convtranspose_1d_output_shape", 11, "ConvTranspose", [("x", x), ("w", w)],
               [("y", y)], dict(strides=[2], output_shape=[8]))
    # SAME_LOWER: output = input * stride, the odd padding at the start.
    x, w = randn(1, 1, 3, 3), randn(1, 2, 3, 3)
    y = convt_ref(x, w, None, [2, 2], [1, 1, 0, 0], [1, 1], 1, [0, 0])
    write_case("convtranspose_2d_same_lower", 11, "ConvTranspose", [("x", x), ("w", w)],
               [("y", y)], dict(strides=[2, 2], auto_pad="SAME_LOWER"))


# --- Pooling (PyTorch, symmetric pads) --------------------------------------------------

MAXP = {1: F.max_pool1d, 2: F.max_pool2d, 3: F.max_pool3d}
AVGP = {1: F.avg_pool1d, 2: F.avg_pool2d, 3: F.avg_pool3d}


def pool_cases():
    x = randn(2, 3, 7, 6)
    y, idx = MAXP[2](t64(x), kernel_size=[3, 2], stride=[2, 2], padding=[1, 1], dilation=[1, 2],
                     ceil_mode=True, return_indices=True)
    idx = idx.numpy()
    plane = 7 * 6
    nc = (np.arange(2 * 3).reshape(2, 3, 1, 1)) * plane
    write_case("maxpool_2d_opset10_ceil_dilation_indices", 10, "MaxPool", [("x", x)],
               [("y", y.numpy().astype(np.float32)), ("i", (idx + nc).astype(np.int64))],
               dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], dilations=[1, 2],
                    ceil_mode=1))
    # storage_order=1 (opset 8): the spatial index is column-major.
    x = randn(1, 2, 5, 4)
    y, idx = MAXP[2](t64(x), kernel_size=2, stride=1, return_indices=True)
    h, w_ = np.unravel_index(idx.numpy(), (5, 4))
    col = w_ * 5 + h + np.arange(2).reshape(1, 2, 1, 1) * 20
    write_case("maxpool_2d_opset8_storage_order", 8, "MaxPool", [("x", x)],
               [("y", y.numpy().astype(np.float32)), ("i", col.astype(np.int64))],
               dict(kernel_shape=[2, 2], storage_order=1))
    x = randn(1, 2, 6)
    write_case("maxpool_1d_opset1", 1, "MaxPool", [("x", x)],
               [("y", MAXP[1](t64(x), 3, stride=2, padding=1).numpy().astype(np.float32))],
               dict(kernel_shape=[3], strides=[2], pads=[1, 1]))
    xi = rng.integers(-128, 127, size=(1, 2, 5, 5)).astype(np.int8)
    y = MAXP[2](torch.from_numpy(xi.astype(np.float64)), 3, stride=2, padding=1).numpy()
    write_case("maxpool_2d_int8", 12, "MaxPool", [("x", xi)], [("y", y.astype(np.int8))],
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]))
    x = randn(1, 2, 4, 5, 6)
    write_case("maxpool_3d_stride", 12, "MaxPool", [("x", x)],
               [("y", MAXP[3](t64(x), [2, 3, 2], stride=[2, 1, 2]).numpy().astype(np.float32))],
               dict(kernel_shape=[2, 3, 2], strides=[2, 1, 2]))
    # AveragePool count_include_pad (opset 7) and ceil_mode (opset 10).
    x = randn(2, 2, 6, 5)
    y = AVGP[2](t64(x), [3, 3], stride=[2, 2], padding=[1, 1], count_include_pad=True)
    write_case("averagepool_2d_opset7_include_pad", 7, "AveragePool", [("x", x)],
               [("y", y.numpy().astype(np.float32))],
               dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1], count_include_pad=1))
    y = AVGP[2](t64(x), [3, 2], stride=[2, 2], padding=[1, 1], ceil_mode=True,
                count_include_pad=True)
    write_case("averagepool_2d_opset10_ceil_include_pad", 10, "AveragePool", [("x", x)],
               [("y", y.numpy().astype(np.float32))],
               dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1,
                    count_include_pad=1))
    y = AVGP[2](t64(x), [3, 2], stride=[2, 2], padding=[1, 1], ceil_mode=True,
                count_include_pad=False)
    write_case("averagepool_2d_ceil_exclude_pad", 11, "AveragePool", [("x", x)],
               [("y", y.numpy().astype(np.float32))],
               dict(kernel_shape=[3, 2], strides=[2, 2], pads=[1, 1, 1, 1], ceil_mode=1))
    x = randn(1, 3, 8)
    write_case("averagepool_1d_opset1", 1, "AveragePool", [("x", x)],
               [("y", AVGP[1](t64(x), 4, stride=2).numpy().astype(np.float32))],
               dict(kernel_shape=[4], strides=[2]))
    # LpPool p=3 (float attribute, opset 1) and p=2 (opset 11); GlobalLpPool.
    x = randn(1, 2, 5, 5)
    # PyTorch's lp_pool raises x (not |x|) to p; ONNX uses |x|.
    y = F.lp_pool2d(t64(np.abs(x)), 3.0, [2, 2], stride=[2, 1])
    write_case("lppool_2d_opset1_p3", 1, "LpPool", [("x", x)], [("y", y.numpy().astype(np.float32))],
               dict(kernel_shape=[2, 2], strides=[2, 1], p=3.0))
    y = np.sqrt((x.astype(np.float64) ** 2).sum(axis=(2, 3), keepdims=True))
    write_case("globallppool_p2", 2, "GlobalLpPool", [("x", x)], [("y", y.astype(np.float32))],
               dict(p=2))
    x = randn(2, 3, 4, 3, 2)
    write_case("globalaveragepool_3d", 1, "GlobalAveragePool", [("x", x)],
               [("y", x.astype(np.float64).mean(axis=(2, 3, 4), keepdims=True).astype(np.float32))])


# --- MatMul, Gemm, Einsum ---------------------------------------------------------------

def matmul_cases():
    a, b = randn(4), randn(3, 4, 5)
    write_case("matmul_1d_3d", 13, "MatMul", [("a", a), ("b", b)],
               [("y", np.matmul(a.astype(np.float64), b).astype(np.float32))])
    a, b = randn(2, 1, 3, 4), randn(5, 4, 2)
    write_case("matmul_broadcast_batch", 13, "MatMul", [("a", a), ("b", b)],
               [("y", np.matmul(a.astype(np.float64), b).astype(np.float32))])
    a, b = randn(3, 4), randn(4)
    write_case("matmul_2d_1d_opset1", 1, "MatMul", [("a", a), ("b", b)],
               [("y", np.matmul(a.astype(np.float64), b).astype(np.float32))])
    a = rng.integers(-50, 50, size=(2, 3, 4)).astype(np.int64)
    b = rng.integers(-50, 50, size=(4, 2)).astype(np.int64)
    write_case("matmul_int64", 13, "MatMul", [("a", a), ("b", b)], [("y", np.matmul(a, b))])
    a = rng.integers(-9, 9, size=(3, 5)).astype(np.int32)
    b = rng.integers(-9, 9, size=(5, 2)).astype(np.int32)
    write_case("matmul_int32", 9, "MatMul", [("a", a), ("b", b)], [("y", np.matmul(a, b))])
    a, b = randn(2, 3).astype(np.float16), randn(3, 4).astype(np.float16)
    y = np.matmul(a.astype(np.float64), b.astype(np.float64)).astype(np.float16)
    write_case("matmul_float16", 13, "MatMul", [("a", a), ("b", b)], [("y", y)])


def gemm_cases():
    a, b, c = randn(3, 4), randn(5, 4), randn(5)
    y = 0.5 * a.astype(np.float64) @ b.T.astype(np.float64) + 2.0 * c
    write_case("gemm_opset6_broadcast", 6, "Gemm", [("a", a), ("b", b), ("c", c)],
               [("y", y.astype(np.float32))], dict(transB=1, alpha=0.5, beta=2.0, broadcast=1))
    a, b, c = randn(4, 3), randn(4, 2), randn(3, 1)
    y = a.T.astype(np.float64) @ b + c
    write_case("gemm_opset7_transa_column_bias", 7, "Gemm", [("a", a), ("b", b), ("c", c)],
               [("y", y.astype(np.float32))], dict(transA=1))
    a, b = randn(2, 3, dtype=np.float64), randn(3, 4, dtype=np.float64)
    write_case("gemm_opset11_no_c_float64", 11, "Gemm", [("a", a), ("b", b)],
               [("y", 1.5 * a @ b)], dict(alpha=1.5))
    a = rng.integers(-5, 5, size=(2, 3)).astype(np.int32)
    b = rng.integers(-5, 5, size=(3, 2)).astype(np.int32)
    c = rng.integers(-5, 5, size=(2,)).astype(np.int32)
    write_case("gemm_int32", 13, "Gemm", [("a", a), ("b", b), ("c", c)], [("y", a @ b + c)])


def einsum_cases():
    cases = [
        ("einsum_diagonal_explicit", "ii->i", [randn(4, 4)]),
        ("einsum_trace_implicit", "ii", [randn(3, 3)]),
        ("einsum_implicit_order", "ba,ca", [randn(2, 3), randn(4, 3)]),
        ("einsum_ellipsis_broadcast", "...ij,...jk->...ik", [randn(2, 1, 3, 4), randn(5, 4, 2)]),
        ("einsum_three_operands", "ij,jk,kl->il", [randn(2, 3), randn(3, 4), randn(4, 2)]),
        ("einsum_batch_diag_sum", "bii->b", [randn(3, 4, 4)]),
        ("einsum_outer", "i,j->ij", [randn(3), randn(4)]),
        ("einsum_ellipsis_implicit", "...i,i", [randn(2, 3, 4), randn(4)]),
    ]
    for name, eq, ops in cases:
        y = np.einsum(eq, *[o.astype(np.float64) for o in ops])
        write_case(name, 12, "Einsum", [("x%d" % i, o) for i, o in enumerate(ops)],
                   [("y", np.asarray(y).astype(np.float32))], dict(equation=eq))
    a = rng.integers(-5, 5, size=(2, 3)).astype(np.int64)
    b = rng.integers(-5, 5, size=(3, 2)).astype(np.int64)
    write_case("einsum_int64", 12, "Einsum", [("a", a), ("b", b)],
               [("y", np.einsum("ij,jk->ik", a, b))], dict(equation="ij,jk->ik"))


# --- Normalisation ----------------------------------------------------------------------

def bn(x, s, b, m, v, eps, per_activation=False):
    x = x.astype(np.float64)
    shape = (1, -1) + (1,) * (x.ndim - 2)
    if per_activation:
        shape = (1,) + s.shape
    r = lambda a: np.asarray(a, np.float64).reshape(shape)
    return ((x - r(m)) / np.sqrt(r(v) + eps) * r(s) + r(b)).astype(np.float32)


def norm_cases():
    x = randn(2, 3, 4, 5)
    s, b, m = randn(3), randn(3), randn(3)
    v = rng.uniform(0.5, 2.0, 3).astype(np.float32)
    write_case("batchnorm_opset1_consumed_inputs", 1, "BatchNormalization",
               [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)],
               [("y", bn(x, s, b, m, v, 1e-3))],
               dict(epsilon=1e-3, is_test=1, consumed_inputs=[0, 0, 0, 1, 1]))
    x = randn(2, 3, 4)
    s, b, m = randn(3, 4), randn(3, 4), randn(3, 4)
    v = rng.uniform(0.5, 2.0, (3, 4)).astype(np.float32)
    write_case("batchnorm_opset7_spatial0", 7, "BatchNormalization",
               [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)],
               [("y", bn(x, s, b, m, v, 1e-5, per_activation=True))], dict(spatial=0))
    x = randn(3, 2, 2, 2, 2, dtype=np.float64)
    s, b, m = randn(2, dtype=np.float64), randn(2, dtype=np.float64), randn(2, dtype=np.float64)
    v = rng.uniform(0.5, 2.0, 2)
    write_case("batchnorm_opset9_3d_float64", 9, "BatchNormalization",
               [("x", x), ("s", s), ("b", b), ("m", m), ("v", v)],
               [("y", bn(x, s, b, m, v, 1e-5).astype(np.float64))])
    x = randn(2, 3, 6)
    s, b = randn(3), randn(3)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=2, keepdims=True)
    var = xd.var(axis=2, keepdims=True)
    y = (xd - mu) / np.sqrt(var + 1e-2) * s.reshape(1, 3, 1) + b.reshape(1, 3, 1)
    write_case("instancenorm_opset1_1d", 1, "InstanceNormalization",
               [("x", x), ("s", s), ("b", b)], [("y", y.astype(np.float32))], dict(epsilon=1e-2))
    x = randn(1, 6, 3, 2)
    size, alpha, beta, bias = 4, 2e-3, 0.6, 1.5
    # The ONNX window for an even size reaches one channel further up than PyTorch's.
    xd = x.astype(np.float64)
    sq = np.zeros_like(xd)
    for c in range(6):
        lo, hi = max(0, c - (size - 1) // 2), min(5, c + size // 2)
        sq[:, c] = (xd[:, lo:hi + 1] ** 2).sum(axis=1)
    y = xd / (bias + alpha / size * sq) ** beta
    write_case("lrn_opset1_even_size", 1, "LRN", [("x", x)], [("y", y.astype(np.float32))],
               dict(size=size, alpha=alpha, beta=beta, bias=bias))
    x = randn(3, 4, 5)
    xd = x.astype(np.float64)
    write_case("lpnormalization_l1_axis1", 1, "LpNormalization", [("x", x)],
               [("y", (xd / np.abs(xd).sum(axis=1, keepdims=True)).astype(np.float32))],
               dict(axis=1, p=1))
    write_case("lpnormalization_l2_default", 1, "LpNormalization", [("x", x)],
               [("y", (xd / np.sqrt((xd ** 2).sum(axis=-1, keepdims=True))).astype(np.float32))])
    x = randn(2, 3, 4)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=(0, 2), keepdims=True)
    sd = np.sqrt((xd ** 2).mean(axis=(0, 2), keepdims=True) - mu ** 2)
    write_case("mvn_opset9_axes02", 9, "MeanVarianceNormalization", [("x", x)],
               [("y", ((xd - mu) / (sd + 1e-9)).astype(np.float32))], dict(axes=[0, 2]))
    x, s, b = randn(2, 3, 4), randn(4), randn(4)
    xd = x.astype(np.float64)
    mu = xd.mean(axis=-1, keepdims=True)
    var = xd.var(axis=-1, keepdims=True)
    inv = 1 / np.sqrt(var + 1e-5)
    write_case("layernorm_mean_invstd", 17, "LayerNormalization", [("x", x), ("s", s), ("b", b)],
               [("y", ((xd - mu) * inv * s + b).astype(np.float32)), ("mean", mu.astype(np.float32)),
                ("inv_std", inv.astype(np.float32))])


# --- Resize and Upsample ----------------------------------------------------------------

def nearest_asym(x, scales, down_ceil):
    """Opset < 11 nearest: the source index of output i is x/scale, truncated when
    upsampling and rounded up when downsampling (ONNX Runtime's rule)."""
    out_shape = [int(np.floor(d * s)) for d, s in zip(x.shape, scales)]
    idx = []
    for d, s, o in zip(x.shape, scales, out_shape):
        src = np.arange(o) / s
        src = np.ceil(src) if (down_ceil and s < 1) else np.floor(src)
        idx.append(np.minimum(src.astype(np.int64), d - 1))
    return x[np.ix_(*idx)]


def linear_asym(x, scales):
    y = x.astype(np.float64)
    for ax, s in enumerate(scales):
        n = y.shape[ax]
        o = int(np.floor(n * s))
        src = np.clip(np.arange(o) / s, 0, n - 1)
        i0 = np.floor(src).astype(np.int64)
        i1 = np.minimum(i0 + 1, n - 1)
        t = (src - i0).reshape([-1 if a == ax else 1 for a in range(y.ndim)])
        y = np.take(y, i0, axis=ax) * (1 - t) + np.take(y, i1, axis=ax) * t
    return y.astype(x.dtype)


def resize_cases():
    x = np.arange(1, 9, dtype=np.float32).reshape(1, 1, 2, 4)
    sc = np.array([1, 1, 2, 3], np.float32)
    write_case("upsample_opset7_nearest_attr", 7, "Upsample", [("x", x)],
               [("y", nearest_asym(x, sc, False))], dict(scales=[1.0, 1.0, 2.0, 3.0]))
    sc = np.array([1, 1, 2, 2.5], np.float32)
    write_case("upsample_opset9_linear", 9, "Upsample", [("x", x), ("scales", sc)],
               [("y", linear_asym(x, sc))], dict(mode="linear"))
    sc = np.array([1, 1, 0.6, 0.6], np.float32)
    write_case("resize_opset10_downsample_nearest", 10, "Resize", [("x", x), ("scales", sc)],
               [("y", nearest_asym(x, sc, True))])
    sc = np.array([1, 1, 2, 1.5], np.float32)
    write_case("resize_opset10_upsample_linear", 10, "Resize", [("x", x), ("scales", sc)],
               [("y", linear_asym(x, sc))], dict(mode="linear"))
    # Opset 11: PyTorch's bilinear (align_corners=False) is half_pixel; sizes input.
    x = randn(1, 2, 3, 5)
    y = F.interpolate(t64(x), size=(5, 7), mode="bilinear", align_corners=False).numpy()
    write_case("resize_opset11_sizes_linear_half_pixel", 11, "Resize",
               [("x", x), ("roi", np.zeros(0, np.float32)), ("scales", np.zeros(0, np.float32)),
                ("sizes", np.array([1, 2, 5, 7], np.int64))],
               [("y", y.astype(np.float32))], dict(mode="linear"))
    y = F.interpolate(t64(x), size=(6, 4), mode="bicubic", align_corners=True).numpy()
    write_case("resize_opset13_cubic_align_corners_sizes", 13, "Resize",
               [("x", x), ("", None), ("", None), ("sizes", np.array([1, 2, 6, 4], np.int64))],
               [("y", y.astype(np.float32))],
               dict(mode="cubic", coordinate_transformation_mode="align_corners"))
    # PyTorch's nearest is floor(x / scale): asymmetric + floor.
    xi = rng.integers(0, 255, size=(1, 1, 3, 4)).astype(np.uint8)
    y = F.interpolate(torch.from_numpy(xi.astype(np.float64)), size=(7, 9), mode="nearest").numpy()
    write_case("resize_uint8_nearest_asymmetric_floor", 13, "Resize",
               [("x", xi), ("", None), ("", None), ("sizes", np.array([1, 1, 7, 9], np.int64))],
               [("y", y.astype(np.uint8))],
               dict(coordinate_transformation_mode="asymmetric", nearest_mode="floor"))
    # 3-D trilinear over the last three axes.
    x = randn(1, 1, 2, 3, 4)
    y = F.interpolate(t64(x), scale_factor=(2, 1.5, 0.5), mode="trilinear",
                      align_corners=False, recompute_scale_factor=False).numpy()
    write_case("resize_5d_linear_scales", 13, "Resize",
               [("x", x), ("", None), ("scales", np.array([1, 1, 2, 1.5, 0.5], np.float32))],
               [("y", y.astype(np.float32))], dict(mode="linear"))


# --- Quantisation -----------------------------------------------------------------------

def quantize(x, scale, zp, dtype):
    info = np.iinfo(dtype)
    return np.clip(np.rint(x / scale) + zp, info.min, info.max).astype(dtype)


def quant_cases():
    x = np.array([-3.0, -1.25, -0.75, 0, 0.25, 0.75, 1.25, 2.5, 300], np.float32)
    write_case("quantizelinear_opset10_int8", 10, "QuantizeLinear",
               [("x", x), ("s", np.float32(0.5)), ("z", np.int8(-3))],
               [("y", quantize(x.astype(np.float64), 0.5, -3, np.int8))])
    write_case("quantizelinear_no_zero_point", 13, "QuantizeLinear",
               [("x", x), ("s", np.float32(0.25))],
               [("y", quantize(x.astype(np.float64), 0.25, 0, np.uint8))])
    x = randn(2, 3, 4) * 10
    s = np.array([0.5, 0.1, 2.0], np.float32)
    z = np.array([-10, 0, 7], np.int8)
    y = quantize(x.astype(np.float64), s.reshape(1, 3, 1).astype(np.float64), z.reshape(1, 3, 1), np.int8)
    write_case("quantizelinear_axis_int8", 13, "QuantizeLinear", [("x", x), ("s", s), ("z", z)],
               [("y", y)], dict(axis=-2))
    xq = rng.integers(-128, 127, size=(3, 4)).astype(np.int8)
    s = np.array([0.5, 0.25, 2.0, 1.0], np.float32)
    z = np.array([1, -2, 0, 5], np.int8)
    write_case("dequantizelinear_axis_last", 13, "DequantizeLinear", [("x", xq), ("s", s), ("z", z)],
               [("y", ((xq.astype(np.float64) - z) * s).astype(np.float32))], dict(axis=1))
    xq = rng.integers(0, 255, size=(5,)).astype(np.uint8)
    write_case("dequantizelinear_opset10", 10, "DequantizeLinear",
               [("x", xq), ("s", np.float32(0.125)), ("z", np.uint8(128))],
               [("y", ((xq.astype(np.float64) - 128) * 0.125).astype(np.float32))])
    xi = rng.integers(-1000, 1000, size=(4,)).astype(np.int32)
    write_case("dequantizelinear_int32", 13, "DequantizeLinear", [("x", xi), ("s", np.float32(0.01))],
               [("y", (xi.astype(np.float64) * 0.01).astype(np.float32))])
    # MatMulInteger with per-row a zero points and a batch.
    a = rng.integers(0, 255, size=(2, 3, 4)).astype(np.uint8)
    b = rng.integers(-128, 127, size=(4, 5)).astype(np.int8)
    az = np.array([3, 100, 250], np.uint8)
    bz = np.int8(-4)
    y = np.matmul(a.astype(np.int64) - az.reshape(3, 1), b.astype(np.int64) - bz).astype(np.int32)
    write_case("matmulinteger_per_row_zp", 10, "MatMulInteger",
               [("a", a), ("b", b), ("az", az), ("bz", np.array(bz))], [("y", y)])
    # ConvInteger with groups and padding: padding equals the x zero point.
    x = rng.integers(0, 255, size=(1, 4, 5, 5)).astype(np.uint8)
    w = rng.integers(0, 255, size=(4, 2, 3, 3)).astype(np.uint8)
    xz, wz = np.uint8(12), np.uint8(130)
    y = conv_ref((x.astype(np.float64) - 12), w.astype(np.float64) - 130, None, [1, 1], [1, 1, 1, 1],
                 [1, 1], 2)
    write_case("convinteger_group_pads", 10, "ConvInteger",
               [("x", x), ("w", w), ("xz", np.array(xz)), ("wz", np.array(wz))],
               [("y", np.rint(y).astype(np.int32))], dict(group=2, pads=[1, 1, 1, 1]))
    # QLinearConv with per-channel weight scales and zero points, int8 weights, bias.
    x = rng.integers(0, 255, size=(1, 2, 4, 4)).astype(np.uint8)
    w = rng.integers(-128, 127, size=(3, 2, 2, 2)).astype(np.int8)
    xs, xz = np.float32(0.02), np.uint8(100)
    ws = np.array([0.01, 0.02, 0.005], np.float32)
    wz = np.array([0, 0, 0], np.int8)
    ys, yz = np.float32(0.05), np.uint8(120)
    bias = rng.integers(-500, 500, size=(3,)).astype(np.int32)
    acc = conv_ref(x.astype(np.float64) - 100, w.astype(np.float64), None, [1, 1], [0] * 4, [1, 1], 1)
    acc = np.rint(acc) + bias.reshape(1, 3, 1, 1)
    mult = (np.float32(xs) * ws / np.float32(ys)).astype(np.float32).reshape(1, 3, 1, 1)
    yq = np.clip(np.rint((acc.astype(np.float32) * mult).astype(np.float32)) + 120, 0, 255).astype(np.uint8)
    write_case("qlinearconv_per_channel_bias", 10, "QLinearConv",
               [("x", x), ("xs", np.array(xs)), ("xz", np.array(xz)), ("w", w), ("ws", ws),
                ("wz", wz), ("ys", np.array(ys)), ("yz", np.array(yz)), ("bias", bias)],
               [("y", yq)])
    # QLinearMatMul int8 with a per-column b scale.
    a = rng.integers(-128, 127, size=(2, 3)).astype(np.int8)
    b = rng.integers(-128, 127, size=(3, 4)).astype(np.int8)
    as_, az = np.float32(0.1), np.int8(3)
    bs = np.array([0.01, 0.02, 0.03, 0.04], np.float32)
    bz = np.int8(-1)
    ys, yz = np.float32(0.2), np.int8(-5)
    acc = (a.astype(np.int64) - 3) @ (b.astype(np.int64) + 1)
    mult = (as_ * bs / ys).astype(np.float32)
    yq = np.clip(np.rint((acc.astype(np.float32) * mult).astype(np.float32)) - 5, -128, 127).astype(np.int8)
    write_case("qlinearmatmul_int8_per_column", 10, "QLinearMatMul",
               [("a", a), ("as", np.array(as_)), ("az", np.array(az)), ("b", b), ("bs", bs),
                ("bz", np.array(bz)), ("ys", np.array(ys)), ("yz", np.array(yz))], [("y", yq)])


def grid_sample_cases():
    # PyTorch's grid_sample, as exporters produce it: out-of-range positions with border and
    # reflection padding (bicubic with border clamps each tap, not the position).
    for mode, pad, align in (("bicubic", "border", 0), ("bicubic", "border", 1),
                             ("bicubic", "reflection", 0), ("bilinear", "border", 1),
                             ("nearest", "reflection", 1)):
        x = rng.standard_normal((1, 2, 5, 6)).astype(np.float32)
        g = (rng.random((1, 4, 7, 2)) * 3 - 1.5).astype(np.float32)
        y = F.grid_sample(torch.from_numpy(x).double(), torch.from_numpy(g).double(), mode=mode,
                          padding_mode=pad, align_corners=bool(align)).float().numpy()
        write_case(f"gridsample_{mode}_{pad}_align{align}", 16, "GridSample",
                   [("x", x), ("grid", g)], [("y", y)],
                   {"mode": mode, "padding_mode": pad, "align_corners": align})


def lp_norm_cases():
    # Rows along the last axis four at a time and a remainder, with a zero row; a strided axis.
    x = rng.standard_normal((9, 7)).astype(np.float32)
    x[5] = 0
    n = np.sqrt((x.astype(np.float64) ** 2).sum(axis=-1, keepdims=True))
    y = np.where(n == 0, 0, x / np.where(n == 0, 1, n)).astype(np.float32)
    write_case("lpnormalization_l2_rows", 1, "LpNormalization", [("x", x)], [("y", y)],
               {"axis": -1, "p": 2})
    x = rng.standard_normal((3, 5, 4)).astype(np.float64)
    y = x / np.abs(x).sum(axis=1, keepdims=True)
    write_case("lpnormalization_l1_strided_float64", 1, "LpNormalization", [("x", x)],
               [("y", y)], {"axis": 1, "p": 1})


def main():
    os.makedirs(ROOT, exist_ok=True)
    conv_cases()
    conv_transpose_cases()
    pool_cases()
    matmul_cases()
    gemm_cases()
    einsum_cases()
    norm_cases()
    resize_cases()
    quant_cases()
    grid_sample_cases()
    lp_norm_cases()
    print("wrote", len(os.listdir(ROOT)), "cases under", os.path.normpath(ROOT))


if __name__ == "__main__":
    sys.exit(main())
