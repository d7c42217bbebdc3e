#!/usr/bin/python3
"""Writes the test cases of ONNX Runtime's fused operators under tests/data/contrib/<case>/, in
ONNX backend-test layout (model.onnx, test_data_set_0/input_K.pb and output_K.pb): one node of
each operator ONNX Runtime's graph optimizer writes into the models it saves (com.microsoft
FusedConv, FusedGemm, FusedMatMul, TransposeMatMul, Gelu, BiasGelu, FastGelu, QuickGelu,
SkipLayerNormalization, SkipSimplifiedLayerNormalization, MatMulIntegerToFloat,
DynamicQuantizeMatMul, Attention, MultiHeadAttention, GroupQueryAttention, QAttention,
EmbedLayerNormalization, QEmbedLayerNormalization, MatMulNBits, RotaryEmbedding; Trilu,
GridSample and Inverse of ONNX Runtime's PyTorch export helper; the ONNX-domain SimplifiedLayerNormalization and LayerNormalization before opset 17), over the
forms it writes them in. recur lowers them to ONNX operators
(runtime/engine/optimize/lower_contrib.cc, lower_attention.cc, lower_qlinear.cc).

The expected outputs come from ONNX Runtime 1.30 (CPU, one thread) through onnxruntime-node
(tools/ort_oracle.py), never from recur, except BiasAdd's, which ONNX Runtime runs only on
CUDA: that one is computed here with numpy.

Two more cases are PyTorch models as ONNX Runtime saves them (a Transformer encoder layer
before a bidirectional LSTM, whose attention becomes FusedMatMul with transBatch and whose
GELU becomes BiasGelu; a Conformer-style block before a GRU, whose SiLUs become QuickGelu),
with PyTorch's own outputs as the expected ones.

It also writes tests/data/ort_optimized/<model>.onnx: each shipped model in models/ whose
optimized form (ONNX Runtime's level "extended", as SessionOptions.optimized_model_filepath
saves it) holds one of those operators. CTest runs them against the shipped model's own test
sets (tests/CMakeLists.txt), whose expected outputs come from the model's original oracle.

The QLinear operators of statically quantized models (QLinearAdd, QLinearMul, QLinearSigmoid,
QLinearLeakyRelu, QLinearSoftmax, QLinearConcat, QLinearAveragePool, QLinearGlobalAveragePool,
QLinearWhere, QGemm) and the quantization operators of ONNX Runtime's domain (QuantizeLinear and
DequantizeLinear of 16-bit types, QLinearConv) go to tests/data/qlinear/<case>/, against ONNX
Runtime's outputs, which may differ by one quantization step (with a quantized CNN as ONNX
Runtime saves it at level 'all', in its NHWC forms); QLinearReduceMean and MulInteger,
which ONNX Runtime has no CPU kernel for, against numpy's.

Float16 attention cases go to tests/data/contrib_fp16/<case>/, compared within float16's
precision (CTest: --rtol 1e-2 --atol 1e-3).

The experimental ONNX-domain operators that ONNX Runtime still runs in old models (Affine,
Scale, ScaledTanh, ParametricSoftplus, ThresholdedRelu before opset 10, ImageScaler, Crop) go to
tests/data/experimental/exp_*, against ONNX Runtime's outputs (--only-experimental writes just
those).

Usage: /usr/bin/python3 tools/gen_contrib_tests.py [--out tests/data/contrib]
           [--optimized-out tests/data/ort_optimized] [--qlinear-out tests/data/qlinear]
           [--fp16-out tests/data/contrib_fp16] [--experimental-out tests/data/experimental]
"""

import argparse
import os
import shutil
import subprocess
import tempfile

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from ort_oracle import ort_outputs

HERE = os.path.dirname(os.path.abspath(__file__))
MS = "com.microsoft"
F = TensorProto.FLOAT
NP_TO_ONNX = {np.float32: TensorProto.FLOAT, np.uint8: TensorProto.UINT8,
              np.int8: TensorProto.INT8, np.float16: TensorProto.FLOAT16,
              np.bool_: TensorProto.BOOL, np.int32: TensorProto.INT32,
              np.int16: TensorProto.INT16, np.uint16: TensorProto.UINT16,
              np.int64: TensorProto.INT64, np.float64: TensorProto.DOUBLE}


class Case:
    """One model: a single node; `feeds` are graph inputs, `consts` initializers."""

    def __init__(self, name, op, inputs, outputs, domain=MS, opset=17, **attrs):
        self.name, self.op, self.domain, self.opset = name, op, domain, opset
        self.inputs, self.outputs, self.attrs = inputs, outputs, attrs
        self.feeds, self.consts = [], []
        self.extra, self.graph_outputs = [], outputs
        self.symbolic = False  # graph inputs of symbolic dimensions, known only at run time

    def feed(self, name, a):
        self.feeds.append((name, a))
        return self

    def const(self, name, a):
        self.consts.append((name, a))
        return self

    def model(self):
        node = helper.make_node(self.op, self.inputs, self.outputs, name=self.name,
                                domain=self.domain, **self.attrs)
        ins = [helper.make_tensor_value_info(
            n, NP_TO_ONNX[a.dtype.type],
            ["%s_%d" % (n, k) for k in range(a.ndim)] if self.symbolic else list(a.shape))
               for n, a in self.feeds]
        outs = [onnx.ValueInfoProto(name=o) for o in self.graph_outputs if o]
        graph = helper.make_graph([node] + self.extra, self.name, ins, outs,
                                  [numpy_helper.from_array(a, n) for n, a in self.consts])
        opsets = [helper.make_opsetid("", self.opset), helper.make_opsetid(MS, 1)]
        return helper.make_model(graph, opset_imports=opsets, ir_version=8)


def rand(rng, shape, scale=1.0, dtype=np.float32):
    return (scale * rng.standard_normal(shape)).astype(dtype)


def fused_conv_cases(rng):
    cases = []

    def conv(name, x_shape, w_shape, bias=True, z=False, **attrs):
        ins = ["X", "W", "B" if bias else "", "Z" if z else ""]
        while ins and not ins[-1]:
            ins.pop()
        c = Case(name, "FusedConv", ins, ["Y"], **attrs)
        c.feed("X", rand(rng, x_shape)).const("W", rand(rng, w_shape, 0.4))
        if bias:
            c.const("B", rand(rng, (w_shape[0],), 0.3))
        return c

    cases.append(conv("fused_conv_relu", (2, 3, 8, 8), (4, 3, 3, 3), pads=[1, 1, 1, 1],
                      activation="Relu"))
    cases.append(conv("fused_conv_no_activation", (1, 2, 9), (3, 2, 3), bias=False))
    cases.append(conv("fused_conv_sigmoid_strided", (2, 4, 7, 6), (6, 2, 3, 2), group=2,
                      strides=[2, 1], dilations=[1, 2], activation="Sigmoid"))
    cases.append(conv("fused_conv_tanh_same", (1, 3, 5, 5), (2, 3, 3, 3), auto_pad="SAME_UPPER",
                      activation="Tanh"))
    cases.append(conv("fused_conv_leaky_relu", (2, 4, 12), (5, 4, 3), strides=[2], pads=[1, 1],
                      activation="LeakyRelu", activation_params=[0.2]))
    cases.append(conv("fused_conv_clip", (1, 3, 6, 6), (4, 3, 1, 1), activation="Clip",
                      activation_params=[-0.5, 0.7]))
    cases.append(conv("fused_conv_hard_sigmoid", (1, 2, 10), (3, 2, 5), pads=[2, 2],
                      activation="HardSigmoid", activation_params=[0.3, 0.4]))
    # ConvAddActivationFusion's form (level all): the Add's other operand is Z, added before
    # the activation.
    c = conv("fused_conv_z_relu", (2, 3, 6, 6), (4, 3, 3, 3), z=True, pads=[1, 1, 1, 1],
             activation="Relu")
    cases.append(c.feed("Z", rand(rng, (2, 4, 6, 6))))
    c = conv("fused_conv_z_only", (1, 2, 8), (2, 2, 3), z=True)
    cases.append(c.feed("Z", rand(rng, (1, 2, 6))))
    return cases


def fused_gemm_cases(rng):
    cases = []
    acts = [("Relu", {}), ("Sigmoid", {}), ("Tanh", {}), ("Softplus", {}), ("Softsign", {}),
            ("LeakyRelu", {"activation_alpha": 0.1}), ("Elu", {"activation_alpha": 0.7}),
            ("Celu", {"activation_alpha": 1.3}), ("ThresholdedRelu", {"activation_alpha": 0.2}),
            ("HardSigmoid", {"activation_alpha": 0.3, "activation_beta": 0.45}),
            ("Selu", {"activation_alpha": 1.6, "activation_gamma": 1.05}),
            ("ScaledTanh", {"activation_alpha": 1.5, "activation_beta": 0.6}),
            ("ParametricSoftplus", {"activation_alpha": 0.8, "activation_beta": 1.4})]
    for k, (act, params) in enumerate(acts):
        trans_a, trans_b = k % 2, (k // 2) % 2
        m, kk, n = 5, 7, 6
        a_shape = (kk, m) if trans_a else (m, kk)
        b_shape = (n, kk) if trans_b else (kk, n)
        c_shape = [(n,), (m, n), (1,), (m, 1)][k % 4]
        c = Case("fused_gemm_" + act.lower(), "FusedGemm", ["A", "B", "C"], ["Y"],
                 activation=act, transA=trans_a, transB=trans_b, alpha=0.9 if k % 3 else 1.0,
                 beta=0.5 if k % 5 else 1.0, **params)
        c.feed("A", rand(rng, a_shape)).const("B", rand(rng, b_shape, 0.5))
        cases.append(c.const("C", rand(rng, c_shape, 0.5)))
    c = Case("fused_gemm_no_c", "FusedGemm", ["A", "B"], ["Y"], activation="Relu", transB=1)
    cases.append(c.feed("A", rand(rng, (3, 4))).feed("B", rand(rng, (2, 4))))
    return cases


def fused_matmul_cases(rng):
    forms = [  # name, A shape, B shape, attributes
        ("alpha", (4, 5), (5, 3), {"alpha": 0.125}),
        ("trans_a", (5, 4), (5, 3), {"transA": 1}),
        ("trans_b", (2, 4, 5), (3, 5), {"transB": 1, "alpha": 2.0}),
        ("trans_both_batched", (3, 1, 5, 4), (2, 3, 5), {"transA": 1, "transB": 1}),
        ("trans_batch_a", (4, 2, 5), (2, 5, 3), {"transBatchA": 1}),
        ("trans_batch_b", (2, 4, 5), (5, 2, 3), {"transBatchB": 1, "alpha": 0.5}),
        ("trans_batch_a_trans_a", (5, 2, 3, 4), (2, 3, 5, 6), {"transBatchA": 1, "transA": 1}),
        ("trans_batch_b_trans_b", (2, 3, 4, 5), (6, 2, 3, 5), {"transBatchB": 1, "transB": 1}),
        ("vector_b", (3, 4, 5), (5,), {"alpha": 3.0}),
    ]
    cases = []
    for name, a, b, attrs in forms:
        c = Case("fused_matmul_" + name, "FusedMatMul", ["A", "B"], ["Y"], **attrs)
        cases.append(c.feed("A", rand(rng, a)).feed("B", rand(rng, b)))
    c = Case("transpose_matmul", "TransposeMatMul", ["A", "B"], ["Y"], transA=1, alpha=0.75)
    cases.append(c.feed("A", rand(rng, (2, 5, 4))).feed("B", rand(rng, (2, 5, 3))))
    return cases


def gelu_cases(rng):
    x = rand(rng, (2, 3, 16), 2.0)
    cases = [Case("gelu", "Gelu", ["X"], ["Y"]).feed("X", x),
             Case("fast_gelu", "FastGelu", ["X"], ["Y"]).feed("X", x),
             Case("fast_gelu_bias", "FastGelu", ["X", "bias"], ["Y"]).feed("X", x)
             .const("bias", rand(rng, (16,), 0.5)),
             Case("bias_gelu", "BiasGelu", ["A", "B"], ["Y"]).feed("A", x)
             .const("B", rand(rng, (16,), 0.5)),
             Case("quick_gelu", "QuickGelu", ["X"], ["Y"]).feed("X", x),
             Case("quick_gelu_silu", "QuickGelu", ["X"], ["Y"], alpha=1.0).feed("X", x)]
    return cases


def norm_cases(rng):
    cases = []
    h = 24
    x = rand(rng, (2, 5, h), 1.5) + 0.3
    skip = rand(rng, (2, 5, h))
    gamma, beta, bias = rand(rng, (h,), 0.5) + 1.0, rand(rng, (h,), 0.2), rand(rng, (h,), 0.2)
    c = Case("skip_layer_norm_all_outputs", "SkipLayerNormalization",
             ["input", "skip", "gamma", "beta", "bias"],
             ["output", "mean", "inv_std_var", "input_skip_bias_sum"], epsilon=1e-5)
    cases.append(c.feed("input", x).feed("skip", skip).const("gamma", gamma).const("beta", beta)
                 .const("bias", bias))
    c = Case("skip_layer_norm_broadcast_skip", "SkipLayerNormalization",
             ["input", "skip", "gamma", "beta"], ["output", "", "", "input_skip_bias_sum"])
    cases.append(c.feed("input", x).feed("skip", rand(rng, (1, 5, h))).const("gamma", gamma)
                 .const("beta", beta))
    c = Case("skip_layer_norm_2d_no_beta", "SkipLayerNormalization",
             ["input", "skip", "gamma", "", "bias"], ["output"], epsilon=1e-6)
    cases.append(c.feed("input", x[0]).feed("skip", skip[0]).const("gamma", gamma)
                 .const("bias", bias))
    c = Case("skip_simplified_layer_norm", "SkipSimplifiedLayerNormalization",
             ["input", "skip", "gamma", "bias"], ["output", "", "", "input_skip_bias_sum"],
             epsilon=1e-6)
    cases.append(c.feed("input", x).feed("skip", skip).const("gamma", gamma).const("bias", bias))
    c = Case("skip_simplified_layer_norm_inv_std", "SkipSimplifiedLayerNormalization",
             ["input", "skip", "gamma"], ["output", "", "inv_std_var"])
    cases.append(c.feed("input", x).feed("skip", skip).const("gamma", gamma))
    c = Case("simplified_layer_norm", "SimplifiedLayerNormalization", ["X", "scale"], ["Y"],
             domain="", opset=13, epsilon=1e-6)
    cases.append(c.feed("X", x).const("scale", gamma))
    c = Case("simplified_layer_norm_axis1_inv_std", "SimplifiedLayerNormalization",
             ["X", "scale"], ["Y", "inv_std_var"], domain="", opset=14, axis=1)
    cases.append(c.feed("X", x).const("scale", rand(rng, (5, h), 0.5) + 1.0))
    c = Case("layer_norm_opset13", "LayerNormalization", ["X", "scale", "B"],
             ["Y", "Mean", "InvStdDev"], domain="", opset=13, epsilon=1e-5)
    cases.append(c.feed("X", x).const("scale", gamma).const("B", beta))
    c = Case("layer_norm_opset11_axis", "LayerNormalization", ["X", "scale"], ["Y"],
             domain="", opset=11, axis=-2)
    cases.append(c.feed("X", x).const("scale", rand(rng, (5, h), 0.5) + 1.0))
    return cases


def quantized(rng, shape, dtype):
    lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
    return rng.integers(lo, hi, shape).astype(dtype)


def integer_matmul_cases(rng):
    cases = []
    k, n = 16, 8
    c = Case("matmul_integer_to_float", "MatMulIntegerToFloat",
             ["A", "B", "a_scale", "b_scale", "a_zero_point", "b_zero_point", "bias"], ["Y"])
    c.feed("A", quantized(rng, (2, 3, k), np.uint8)).const("B", quantized(rng, (k, n), np.int8))
    c.feed("a_scale", np.array(0.02, np.float32))
    c.const("b_scale", (0.01 + 0.01 * rng.random(n)).astype(np.float32))
    c.feed("a_zero_point", np.array(131, np.uint8))
    c.const("b_zero_point", np.zeros(n, np.int8)).const("bias", rand(rng, (n,), 0.5))
    cases.append(c)
    c = Case("matmul_integer_to_float_uint8_b", "MatMulIntegerToFloat",
             ["A", "B", "a_scale", "b_scale", "", "b_zero_point"], ["Y"])
    c.feed("A", quantized(rng, (4, k), np.uint8)).const("B", quantized(rng, (k, n), np.uint8))
    c.const("a_scale", np.array(0.05, np.float32)).const("b_scale", np.array(0.003, np.float32))
    cases.append(c.const("b_zero_point", np.array(128, np.uint8)))
    c = Case("dynamic_quantize_matmul", "DynamicQuantizeMatMul",
             ["A", "B", "b_scale", "b_zero_point", "bias"], ["Y"])
    c.feed("A", rand(rng, (2, 5, k))).const("B", quantized(rng, (k, n), np.int8))
    c.const("b_scale", (0.01 + 0.01 * rng.random(n)).astype(np.float32))
    c.const("b_zero_point", np.zeros(n, np.int8)).const("bias", rand(rng, (n,), 0.5))
    cases.append(c)
    c = Case("dynamic_quantize_matmul_uint8_b", "DynamicQuantizeMatMul",
             ["A", "B", "b_scale", "b_zero_point"], ["Y"])
    c.feed("A", rand(rng, (3, k)) + 2.0).const("B", quantized(rng, (k, n), np.uint8))
    cases.append(c.const("b_scale", np.array(0.004, np.float32))
                 .const("b_zero_point", np.array(120, np.uint8)))
    c = Case("dynamic_quantize_matmul_zero_a", "DynamicQuantizeMatMul", ["A", "B", "b_scale"],
             ["Y"])
    c.feed("A", np.zeros((2, k), np.float32)).const("B", quantized(rng, (k, n), np.int8))
    cases.append(c.const("b_scale", np.array(0.01, np.float32)))
    return cases


def attention_cases():
    """com.microsoft Attention and MultiHeadAttention, over the masks, past and bias forms ONNX
    Runtime's CPU kernels take."""
    rng = np.random.default_rng(20261129)
    cases = []
    B, S, D, N = 2, 5, 16, 2

    def attention(name, mask=None, past=None, bias=True, present=False, attn_bias=None,
                  sizes=None, **attrs):
        hq, hk, hv = sizes or (D, D, D)
        ins = ["x", "w", "b" if bias else "", "mask" if mask is not None else "",
               "past" if past is not None else "", "ab" if attn_bias is not None else ""]
        while not ins[-1]:
            ins.pop()
        outs = ["y", "present"] if present else ["y"]
        if sizes:
            attrs["qkv_hidden_sizes"] = list(sizes)
        c = Case(name, "Attention", ins, outs, num_heads=N, **attrs)
        c.feed("x", rand(rng, (B, S, D))).const("w", rand(rng, (D, hq + hk + hv), 0.3))
        if bias:
            c.const("b", rand(rng, (hq + hk + hv,), 0.1))
        if mask is not None:
            c.feed("mask", mask)
        if past is not None:
            c.feed("past", past)
        if attn_bias is not None:
            c.feed("ab", attn_bias)
        return c

    cases.append(attention("attention"))
    cases.append(attention("attention_scale", scale=0.2))
    cases.append(attention("attention_unidirectional", unidirectional=1))
    raw = np.ones((B, S), np.int32)
    raw[0, 3:] = 0
    raw[1, 0] = 0
    cases.append(attention("attention_mask_raw_2d", mask=raw))
    cases.append(attention("attention_mask_raw_3d",
                           mask=(rng.random((B, S, S)) < 0.7).astype(np.int32)))
    cases.append(attention("attention_mask_ends", mask=np.array([3, 5], np.int32)))
    cases.append(attention("attention_mask_ends_starts", mask=np.array([4, 5, 1, 2], np.int32)))
    cases.append(attention("attention_unidirectional_mask", mask=raw, unidirectional=1))
    cases.append(attention("attention_attention_bias",
                           attn_bias=rand(rng, (1, N, S, S))))
    cases.append(attention("attention_qkv_hidden_sizes", sizes=(16, 16, 8)))
    cases.append(attention("attention_mask_filter_value", mask=raw, mask_filter_value=-1e4 * 3))
    P = 3
    past = rand(rng, (2, B, N, P, D // N))
    pmask = np.ones((B, P + S), np.int32)
    pmask[1, :2] = 0
    cases.append(attention("attention_past_present", past=past, present=True, unidirectional=1,
                           mask=pmask))
    cases.append(attention("attention_present_only", present=True))

    L = 7
    def mha(name, key3=True, bias=True, mask=None, attn_bias=None, past=False, present=False,
            L=7, **attrs):
        ins = ["q", "k", "v", "b" if bias else "", "mask" if mask is not None else "",
               "ab" if attn_bias is not None else "", "pk" if past else "", "pv" if past else ""]
        while not ins[-1]:
            ins.pop()
        outs = ["y", "present_key", "present_value"] if present else ["y"]
        c = Case(name, "MultiHeadAttention", ins, outs, num_heads=N, **attrs)
        c.feed("q", rand(rng, (B, S, D)))
        if key3:
            c.feed("k", rand(rng, (B, L, D))).feed("v", rand(rng, (B, L, D)))
        else:
            c.feed("k", rand(rng, (B, N, L, D // N))).feed("v", rand(rng, (B, N, L, D // N)))
        if bias:
            c.const("b", rand(rng, (3 * D,), 0.1))
        if mask is not None:
            c.feed("mask", mask)
        if attn_bias is not None:
            c.feed("ab", attn_bias)
        if past:
            c.feed("pk", rand(rng, (B, N, 3, D // N))).feed("pv", rand(rng, (B, N, 3, D // N)))
        return c

    cases.append(mha("mha_cross"))
    kmask = np.ones((B, L), np.int32)
    kmask[0, 5:] = 0
    cases.append(mha("mha_key_padding_mask_2d", mask=kmask))
    cases.append(mha("mha_key_padding_mask_ends", mask=np.array([4, 7], np.int32)))
    cases.append(mha("mha_bnsh_key_value", key3=False, bias=False))
    cases.append(mha("mha_attention_bias", attn_bias=rand(rng, (B, N, S, L)), scale=0.3))
    cases.append(mha("mha_past_present", past=True, present=True))
    # Causal self-attention over new keys as many as the queries, after a past. (Where the new
    # keys outnumber the queries, ONNX Runtime 1.30 leaves its last query row unmasked.)
    cases.append(mha("mha_unidirectional_past", past=True, present=True, unidirectional=1, L=S))
    # Every input dimension symbolic: the masks are built at run time.
    for c in (attention("attention_dynamic_past_present", past=past, present=True,
                        unidirectional=1, mask=pmask),
              attention("attention_dynamic_mask_ends_starts", mask=np.array([4, 5, 1, 2], np.int32)),
              mha("mha_dynamic_unidirectional_past", past=True, present=True, unidirectional=1,
                  L=S, mask=np.array([8, 6], np.int32))):
        c.symbolic = True
        cases.append(c)
    return cases

def embed_layer_norm_cases():
    """com.microsoft EmbedLayerNormalization (BERT's embeddings: word, position and segment
    lookups summed and layer-normalized; the mask's per-sequence count as mask_index)."""
    rng = np.random.default_rng(20261201)
    B, S, H, V, P = 2, 6, 8, 20, 10
    cases = []

    def emb(name, segment=True, mask=True, position_ids=None, outs=("y", "mask_index"),
            **attrs):
        ins = ["ids", "seg" if segment else "", "word", "pos", "segemb" if segment else "",
               "gamma", "beta", "mask" if mask else "",
               "pos_ids" if position_ids is not None else ""]
        while not ins[-1]:
            ins.pop()
        c = Case(name, "EmbedLayerNormalization", ins, list(outs), **attrs)
        c.feed("ids", rng.integers(0, V, (B, S)).astype(np.int32))
        if segment:
            c.feed("seg", rng.integers(0, 2, (B, S)).astype(np.int32))
        c.const("word", rand(rng, (V, H))).const("pos", rand(rng, (P, H)))
        if segment:
            c.const("segemb", rand(rng, (2, H)))
        c.const("gamma", (1 + 0.1 * rng.standard_normal(H)).astype(np.float32))
        c.const("beta", rand(rng, (H,), 0.1))
        if mask:
            m = np.ones((B, S), np.int32)
            m[0, 4:] = 0
            c.feed("mask", m)
        if position_ids is not None:
            c.feed("pos_ids", position_ids)
        return c

    cases.append(emb("embed_layer_norm"))
    cases.append(emb("embed_layer_norm_no_segment_no_mask", segment=False, mask=False,
                     epsilon=1e-5))
    cases.append(emb("embed_layer_norm_position_ids",
                     position_ids=rng.integers(0, P, (B, S)).astype(np.int32),
                     outs=("y", "mask_index", "embedding_sum")))
    cases.append(emb("embed_layer_norm_sum_only", outs=("y", "", "embedding_sum")))
    # BERT's first layer as ONNX Runtime's transformer optimizer writes it: the embeddings'
    # mask_index is the 1-D mask of the Attention, whose output joins the embeddings in a
    # SkipLayerNormalization. Each node is lowered only once the one before it is.
    c = emb("bert_layer_chain", outs=("e", "mask_index"))
    c.graph_outputs = ["y"]
    c.extra = [helper.make_node("Attention", ["e", "w", "b", "mask_index"], ["a"], domain=MS,
                                num_heads=2, name="attention"),
               helper.make_node("SkipLayerNormalization", ["a", "e", "g2", "b2"], ["y"],
                                domain=MS, name="skip_norm")]
    c.const("w", rand(rng, (H, 3 * H), 0.3)).const("b", rand(rng, (3 * H,), 0.1))
    cases.append(c.const("g2", rand(rng, (H,))).const("b2", rand(rng, (H,))))
    return cases

def matmul_nbits_cases():
    """com.microsoft MatMulNBits (weight-only 4-bit and 8-bit blocks, as ONNX Runtime's
    weight quantizer and its DequantizeLinear + MatMul fusion write them)."""
    rng = np.random.default_rng(20261202)
    cases = []

    def pack(q, bits):
        """q (rows, n) of values below 2^bits -> uint8 bytes, two 4-bit values a byte, the
        low nibble first."""
        if bits == 8:
            return q.astype(np.uint8)
        if q.shape[1] % 2:
            q = np.concatenate([q, np.zeros((q.shape[0], 1), q.dtype)], axis=1)
        return (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)

    def case(name, a_shape, k, n, block, bits=4, zp=True, bias=False):
        blocks = (k + block - 1) // block
        q = rng.integers(0, 1 << bits, (n, blocks * block)).astype(np.uint8)
        q[:, k:] = 0
        b = pack(q, bits).reshape(n, blocks, block * bits // 8)
        scales = (0.01 + 0.02 * rng.random(n * blocks)).astype(np.float32)
        ins = ["A", "B", "scales"]
        c = Case(name, "MatMulNBits", ins, ["Y"], K=k, N=n, bits=bits, block_size=block)
        c.feed("A", rand(rng, a_shape)).const("B", b).const("scales", scales)
        if zp:
            z = rng.integers(0, 1 << bits, (n, blocks)).astype(np.uint8)
            c.inputs.append("zp")
            c.const("zp", pack(z, bits).reshape(-1))
        if bias:
            c.inputs += [""] * (4 - len(c.inputs)) + ["", "bias"]
            c.const("bias", rand(rng, (n,), 0.1))
        return c

    cases.append(case("matmul_nbits4", (3, 64), 64, 16, 32))
    cases.append(case("matmul_nbits4_ragged_k_no_zp_bias", (2, 3, 50), 50, 8, 16, zp=False,
                      bias=True))
    cases.append(case("matmul_nbits4_odd_blocks", (4, 96), 96, 12, 32))
    cases.append(case("matmul_nbits8", (3, 64), 64, 16, 32, bits=8))
    return cases

def rotary_embedding_cases():
    """com.microsoft RotaryEmbedding (which ONNX's RotaryEmbedding-23 came from)."""
    rng = np.random.default_rng(20261203)
    cases = []
    B, S, N, H, MAXP = 2, 5, 2, 8, 16

    def caches(rot):
        pos = np.arange(MAXP)[:, None]
        freq = 1.0 / (10000 ** (np.arange(0, rot, 2) / rot))
        ang = pos * freq[None, :]
        return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)

    def case(name, shape, pos, rot=0, **attrs):
        c = Case(name, "RotaryEmbedding", ["x", "pos", "cos", "sin"], ["y"], **attrs)
        cos, sin = caches(rot or H)
        if rot:
            c.attrs["rotary_embedding_dim"] = rot
        return c.feed("x", rand(rng, shape)).feed("pos", pos).const("cos", cos).const("sin", sin)

    ids = rng.integers(0, MAXP, (B, S)).astype(np.int64)
    cases.append(case("rotary_embedding_position_ids", (B, S, N * H), ids, num_heads=N))
    cases.append(case("rotary_embedding_offset", (B, S, N * H), np.array([3], np.int64),
                      num_heads=N))
    cases.append(case("rotary_embedding_interleaved_bnsh", (B, N, S, H), ids, interleaved=1))
    cases.append(case("rotary_embedding_partial", (B, S, N * H), ids, rot=4, num_heads=N))
    return cases

def group_query_attention_cases():
    """com.microsoft GroupQueryAttention over its KV cache: a first prompt, a decoding step
    after a past, packed QKV, rotary embeddings, a local window, softcap, and sequences of
    different lengths in a cache of fixed size."""
    rng = np.random.default_rng(20261204)
    cases = []
    N, KV, MAXP = 4, 2, 32

    def caches(H):
        ang = np.arange(MAXP)[:, None] / (10000 ** (np.arange(0, H, 2) / H))[None, :]
        return np.cos(ang).astype(np.float32), np.sin(ang).astype(np.float32)

    def case(name, S, past=0, seqlens=None, total=None, packed=False, rotary=False,
             outputs=("y", "present_key", "present_value"), B=2, H=8, dtype=np.float32,
             **attrs):
        ins = ["q", "" if packed else "k", "" if packed else "v", "pk" if past else "",
               "pv" if past else "", "seqlens", "total"]
        if rotary:
            ins += ["cos", "sin"]
            attrs["do_rotary"] = 1
        c = Case(name, "GroupQueryAttention", ins, ["y", "present_key", "present_value"],
                 num_heads=N, kv_num_heads=KV, **attrs)
        c.graph_outputs = list(outputs)
        r = lambda shape: rand(rng, shape, dtype=dtype)
        if packed:
            c.feed("q", r((B, S, (N + 2 * KV) * H)))
        else:
            c.feed("q", r((B, S, N * H))).feed("k", r((B, S, KV * H)))
            c.feed("v", r((B, S, KV * H)))
        if past:
            c.feed("pk", r((B, KV, past, H))).feed("pv", r((B, KV, past, H)))
        seqlens = np.array(seqlens if seqlens is not None else [past + S - 1] * B, np.int32)
        c.feed("seqlens", seqlens)
        c.feed("total", np.array(total if total is not None else past + S, np.int32))
        if rotary:
            cos, sin = caches(H)
            c.const("cos", cos.astype(dtype)).const("sin", sin.astype(dtype))
        return c

    cases.append(case("gqa_first_prompt", 5))
    cases.append(case("gqa_decode_after_past", 1, past=5))
    # ONNX Runtime's rotation takes heads of a multiple of 16.
    cases.append(case("gqa_packed_qkv_rotary", 5, packed=True, rotary=True, H=16))
    cases.append(case("gqa_decode_rotary", 1, past=6, rotary=True, rotary_interleaved=1, H=16))
    cases.append(case("gqa_local_window", 6, local_window_size=2))
    cases.append(case("gqa_softcap_scale", 4, softcap=2.0, scale=0.5))
    # More than one new token after a past: one sequence (ONNX Runtime's rule).
    cases.append(case("gqa_prompt_after_past", 3, past=4, B=1))
    # A cache of fixed size 10 holding 6 and 4 tokens; one new token each. Only the output:
    # the cache's slots past each sequence are not defined.
    cases.append(case("gqa_fixed_cache_ragged", 1, past=10, seqlens=[6, 4], total=7,
                      outputs=("y",)))
    return cases


def float16_attention_cases():
    """Attention operators in float16 (tests/data/contrib_fp16, compared within float16's
    precision: ONNX Runtime sums in another order)."""
    rng = np.random.default_rng(20261205)
    N, KV, H, S, P = 4, 2, 16, 1, 5
    r = lambda shape: rand(rng, shape, dtype=np.float16)
    ang = np.arange(32)[:, None] / (10000 ** (np.arange(0, H, 2) / H))[None, :]
    c = Case("gqa_float16_rotary_after_past", "GroupQueryAttention",
             ["q", "k", "v", "pk", "pv", "seqlens", "total", "cos", "sin"],
             ["y", "present_key", "present_value"], num_heads=N, kv_num_heads=KV, do_rotary=1)
    c.feed("q", r((2, S, N * H))).feed("k", r((2, S, KV * H))).feed("v", r((2, S, KV * H)))
    c.feed("pk", r((2, KV, P, H))).feed("pv", r((2, KV, P, H)))
    c.feed("seqlens", np.array([P, P], np.int32)).feed("total", np.array(P + 1, np.int32))
    c.const("cos", np.cos(ang).astype(np.float16)).const("sin", np.sin(ang).astype(np.float16))
    m = Case("mha_float16_past", "MultiHeadAttention", ["q", "k", "v", "b", "", "", "pk", "pv"],
             ["y", "present_key", "present_value"], num_heads=2)
    m.feed("q", r((2, 4, 32))).feed("k", r((2, 4, 32))).feed("v", r((2, 4, 32)))
    m.const("b", rand(rng, (96,), 0.1, np.float16))
    m.feed("pk", r((2, 2, 3, 16))).feed("pv", r((2, 2, 3, 16)))
    return [c, m]

def quantized_attention_cases():
    """com.microsoft QAttention, as ONNX Runtime's dynamic quantization writes it: the input
    quantized by DynamicQuantizeLinear before it, the packed weights int8 or uint8."""
    rng = np.random.default_rng(20261206)
    B, S, D, N = 2, 5, 16, 2
    cases = []

    def case(name, wtype, per_column=False, mask=None, **attrs):
        c = Case(name, "QAttention", ["xq", "w", "b", "xs", "ws", "mask" if mask is not None
                                      else "", "xz", "wz"], ["y"], num_heads=N, **attrs)
        c.extra = [helper.make_node("DynamicQuantizeLinear", ["x"], ["xq", "xs", "xz"])]
        c.feed("x", rand(rng, (B, S, D)))
        c.const("w", quantized(rng, (D, 3 * D), wtype)).const("b", rand(rng, (3 * D,), 0.1))
        ws = (0.002 + 0.004 * rng.random(3 * D if per_column else ())).astype(np.float32)
        c.const("ws", ws)
        zero = 128 if wtype == np.uint8 else 0
        c.const("wz", np.full(3 * D if per_column else (), zero, wtype))
        if mask is not None:
            c.feed("mask", mask)
        return c

    cases.append(case("qattention_int8", np.int8))
    cases.append(case("qattention_uint8_per_column_mask", np.uint8, per_column=True,
                      mask=np.array([3, 5], np.int32)))
    cases.append(case("qattention_unidirectional", np.int8, unidirectional=1))
    return cases

def quantized_embed_layer_norm_cases():
    """com.microsoft QEmbedLayerNormalization: EmbedLayerNormalization whose embedding tables,
    gamma and beta are uint8 with a scale and zero point each."""
    rng = np.random.default_rng(20261207)
    B, S, H, V, P = 2, 6, 8, 20, 10
    f = lambda v: np.array(v, np.float32)
    c = Case("qembed_layer_norm", "QEmbedLayerNormalization",
             ["ids", "seg", "word", "pos", "segemb", "gamma", "beta", "mask",
              "word_s", "pos_s", "seg_s", "gamma_s", "beta_s",
              "word_z", "pos_z", "seg_z", "gamma_z", "beta_z"], ["y", "mask_index"])
    c.feed("ids", rng.integers(0, V, (B, S)).astype(np.int32))
    c.feed("seg", rng.integers(0, 2, (B, S)).astype(np.int32))
    for name, shape in (("word", (V, H)), ("pos", (P, H)), ("segemb", (2, H)),
                        ("gamma", (H,)), ("beta", (H,))):
        c.const(name, quantized(rng, shape, np.uint8))
    m = np.ones((B, S), np.int32)
    m[1, 3:] = 0
    c.feed("mask", m)
    for name, scale, zero in (("word", 0.01, 128), ("pos", 0.005, 120), ("seg", 0.008, 130),
                              ("gamma", 0.004, 0), ("beta", 0.002, 128)):
        c.const(name + "_s", f(scale)).const(name + "_z", np.array(zero, np.uint8))
    return [c]

def export_helper_cases():
    """What ONNX Runtime's PyTorch export helper writes for torch.triu, torch.tril and
    grid_sample: com.microsoft Trilu and GridSample."""
    rng = np.random.default_rng(20261208)
    cases = []
    c = Case("ms_trilu_lower_k", "Trilu", ["x", "k"], ["y"], upper=0)
    cases.append(c.feed("x", rand(rng, (2, 4, 5))).const("k", np.array(1, np.int64)))
    cases.append(Case("ms_trilu_upper", "Trilu", ["x"], ["y"]).feed("x", rand(rng, (5, 3))))
    for mode, pad, align in (("bilinear", "zeros", 0), ("bilinear", "border", 1),
                             ("nearest", "reflection", 0), ("bicubic", "zeros", 1)):
        c = Case("ms_grid_sample_%s_%s_align%d" % (mode, pad, align), "GridSample",
                 ["x", "grid"], ["y"], mode=mode, padding_mode=pad, align_corners=align)
        c.feed("x", rand(rng, (2, 3, 5, 6)))
        cases.append(c.feed("grid", (1.2 * rng.random((2, 4, 7, 2)) - 0.6).astype(np.float32)))
    for dt in (np.float32, np.float64):
        a = rng.standard_normal((3, 4, 4)) + 3 * np.eye(4)
        cases.append(Case("ms_inverse_" + np.dtype(dt).name, "Inverse", ["x"], ["y"])
                     .feed("x", a.astype(dt)))
    return cases

def experimental_cases():
    """The experimental ONNX-domain operators of opsets before 10 that ONNX Runtime still runs
    in old models (Affine, Scale, ScaledTanh, ParametricSoftplus, ThresholdedRelu, ImageScaler,
    Crop), at opset 8: tests/data/experimental/exp_*."""
    rng = np.random.default_rng(20261130)
    cases = []

    def case(name, op, x, **attrs):
        c = Case("exp_" + name, op, ["x"], ["y"], domain="", opset=8, **attrs)
        cases.append(c.feed("x", x))

    x = 3 * rand(rng, (2, 3, 4))
    case("affine", "Affine", x, alpha=0.5, beta=-1.25)
    case("scale", "Scale", x, scale=-1.5)
    case("scaled_tanh", "ScaledTanh", x, alpha=1.7, beta=0.66)
    # Large inputs too: the softplus must not overflow.
    case("parametric_softplus", "ParametricSoftplus",
         np.concatenate([x, 40 * x]).astype(np.float32), alpha=0.8, beta=1.3)
    case("thresholded_relu", "ThresholdedRelu", x, alpha=0.3)
    img = rand(rng, (2, 3, 5, 6))
    case("image_scaler", "ImageScaler", img, scale=0.5, bias=[1.0, -2.0, 0.25])
    case("crop_border", "Crop", rand(rng, (1, 2, 6, 7)), border=[1, 2, 0, 1])
    case("crop_scale", "Crop", rand(rng, (2, 1, 6, 7)), border=[2, 1, 0, 0], scale=[3, 4])
    return cases


def write(out_dir, case):
    case_dir = os.path.join(out_dir, case.name)
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    onnx.save(case.model(), os.path.join(case_dir, "model.onnx"))
    for k, (name, a) in enumerate(case.feeds):
        with open(os.path.join(case_dir, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(a, name).SerializeToString())
    return case_dir


def write_outputs(case_dir, case, outs):
    k = 0
    for name in case.graph_outputs:
        if not name:
            continue
        with open(os.path.join(case_dir, "test_data_set_0", "output_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(outs[name], name).SerializeToString())
        k += 1


def bias_add_case(out_dir, rng):
    """BiasAdd: ONNX Runtime has no CPU kernel for it; X + bias + skip in numpy."""
    c = Case("bias_add", "BiasAdd", ["X", "bias", "skip"], ["Y"])
    x, bias, skip = rand(rng, (2, 3, 8)), rand(rng, (8,)), rand(rng, (2, 3, 8))
    c.feed("X", x).const("bias", bias).feed("skip", skip)
    case_dir = write(out_dir, c)
    write_outputs(case_dir, c, {"Y": ((x + bias) + skip).astype(np.float32)})
    return case_dir


def graph_ops(g):
    """{(domain, op)} of g's nodes and its subgraphs'."""
    ops = set()
    for n in g.node:
        ops.add((n.domain, n.op_type))
        for a in n.attribute:
            for sub in ([a.g] if a.HasField("g") else []) + list(a.graphs):
                ops |= graph_ops(sub)
    return ops


def ort_optimized_models(out_dir):
    """The shipped models ONNX Runtime's optimizer writes com.microsoft or ONNX Runtime-only
    operators into, as it saves them."""
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/recur-bench/ort/node_modules"))
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    models_dir = os.path.join(HERE, "..", "models")
    with tempfile.TemporaryDirectory() as tmp:
        for name in sorted(os.listdir(models_dir)):
            src = os.path.join(models_dir, name, "model.onnx")
            if not os.path.exists(src):
                continue
            dst = os.path.join(tmp, name + ".onnx")
            subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"), src, dst, "extended"],
                           check=True, env=env, stderr=subprocess.DEVNULL)
            ops = graph_ops(onnx.load(dst).graph)
            ort_only = sorted(op for d, op in ops
                              if d == MS or op in ("SimplifiedLayerNormalization",
                                                   "LayerNormalization"))
            if ort_only:
                shutil.copy(dst, os.path.join(out_dir, name + ".onnx"))
                print("wrote", os.path.relpath(os.path.join(out_dir, name + ".onnx")), ort_only)


def chain_case(rng):
    """Contrib nodes reading each other's outputs, as in a block ONNX Runtime saves: their
    types and ranks are known only once the node before is lowered."""
    c = Case("contrib_chain", "Gelu", ["x"], ["g"])
    c.feed("x", rand(rng, (2, 4, 8)))
    c.const("w", rand(rng, (4, 8, 6), 0.5)).const("skip", rand(rng, (1, 2, 6)))
    c.const("gamma", rand(rng, (6,), 0.3) + 1.0).const("w2", rand(rng, (3, 6), 0.5))
    c.extra = [
        # g [2, 4, 8] read as [4, 2, 8]: m [4, 2, 6]
        helper.make_node("FusedMatMul", ["g", "w"], ["m"], name="mm", domain=MS,
                         transBatchA=1, alpha=0.5),
        helper.make_node("SkipLayerNormalization", ["m", "skip", "gamma"], ["n"],
                         name="skipnorm", domain=MS),
        helper.make_node("FusedMatMul", ["n", "w2"], ["y"], name="mm2", domain=MS, transB=1,
                         alpha=2.0),
        helper.make_node("QuickGelu", ["y"], ["q"], name="qg", domain=MS),
    ]
    c.graph_outputs = ["q"]
    return c


def subgraph_case(rng):
    """Contrib nodes in If branches: what lowering makes (scalar constants, the axes of a
    ReduceMean) lives in the branch."""
    c = Case("contrib_in_subgraph", "If", ["cond"], ["out"], domain="")
    x = rand(rng, (3, 8))
    c.feed("cond", np.array(True)).feed("x", x)
    c.const("w", rand(rng, (8, 5), 0.5)).const("gamma", rand(rng, (5,), 0.3) + 1.0)

    def branch(name, alpha):
        nodes = [
            helper.make_node("FusedMatMul", ["x", "w"], ["m_" + name], name="mm_" + name,
                             domain=MS, alpha=alpha),
            helper.make_node("SkipSimplifiedLayerNormalization", ["m_" + name, "m_" + name,
                                                                  "gamma"],
                             ["o_" + name, "", "inv_" + name], name="norm_" + name, domain=MS),
            helper.make_node("Mul", ["o_" + name, "inv_" + name], ["r_" + name]),
        ]
        return helper.make_graph(nodes, name, [],
                                 [onnx.ValueInfoProto(name="r_" + name)])
    c.attrs = {"then_branch": branch("then", 0.5), "else_branch": branch("else", 3.0)}
    return c


def torch_cases(out_dir):
    """The PyTorch models above: exported, saved by ONNX Runtime at level extended, and
    expected to give what PyTorch computes."""
    import torch
    import torch.nn as nn
    torch.manual_seed(20261128)

    class TransformerLstm(nn.Module):
        def __init__(self):
            super().__init__()
            self.inp = nn.Linear(20, 64)
            self.enc = nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True,
                                                  activation="gelu")
            self.lstm = nn.LSTM(64, 32, batch_first=True, bidirectional=True)
            self.out = nn.Linear(64, 10)

        def forward(self, x):
            y, _ = self.lstm(self.enc(self.inp(x)))
            return self.out(y)

    class ConformerGru(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln = nn.LayerNorm(48)
            self.pw1 = nn.Conv1d(48, 96, 1)
            self.dw = nn.Conv1d(48, 48, 7, padding=3, groups=48)
            self.bn = nn.BatchNorm1d(48)
            self.pw2 = nn.Conv1d(48, 48, 1)
            self.ff1 = nn.Linear(48, 96)
            self.ff2 = nn.Linear(96, 48)
            self.gru = nn.GRU(48, 32, batch_first=True)
            self.head = nn.Linear(32, 5)
            self.bn.running_mean.uniform_(-0.1, 0.1)
            self.bn.running_var.uniform_(0.5, 1.5)

        def forward(self, x):
            silu = nn.functional.silu
            y = nn.functional.glu(self.pw1(self.ln(x).transpose(1, 2)), dim=1)
            y = self.pw2(silu(self.bn(self.dw(y)))).transpose(1, 2) + x
            y = y + 0.5 * self.ff2(silu(self.ff1(nn.functional.layer_norm(y, (48,)))))
            y, _ = self.gru(y)
            return torch.log_softmax(self.head(y), -1)

    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/recur-bench/ort/node_modules"))
    dirs = []
    for name, model, shape in (("ort_saved_transformer_lstm", TransformerLstm(), (2, 12, 20)),
                               ("ort_saved_conformer_gru", ConformerGru(), (2, 30, 48))):
        model.eval()
        x = torch.randn(*shape)
        case_dir = os.path.join(out_dir, name)
        shutil.rmtree(case_dir, ignore_errors=True)
        os.makedirs(os.path.join(case_dir, "test_data_set_0"))
        with tempfile.TemporaryDirectory() as tmp:
            exported = os.path.join(tmp, "exported.onnx")
            torch.onnx.export(model, x, exported, opset_version=14, input_names=["x"],
                              output_names=["y"], dynamic_axes={"x": {0: "b", 1: "t"}})
            subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"), exported,
                            os.path.join(case_dir, "model.onnx"), "extended"],
                           check=True, env=env, stderr=subprocess.DEVNULL)
        with torch.inference_mode():
            y = model(x).numpy()
        for kind, n, a in (("input", "x", x.numpy()), ("output", "y", y)):
            with open(os.path.join(case_dir, "test_data_set_0", kind + "_0.pb"), "wb") as f:
                f.write(numpy_helper.from_array(a, n).SerializeToString())
        dirs.append(case_dir)
    return dirs


def qlinear_cases():
    rng = np.random.default_rng(20261129)
    u8 = lambda shape: quantized(rng, shape, np.uint8)
    i8 = lambda shape: quantized(rng, shape, np.int8)
    f = lambda v: np.array(v, np.float32)
    cases = []
    for op in ("QLinearAdd", "QLinearMul"):
        name = "q" + op[7:].lower()
        c = Case(name + "_uint8", op, ["A", "As", "Az", "B", "Bs", "Bz", "Cs", "Cz"], ["C"])
        c.feed("A", u8((2, 3, 8))).const("As", f(0.02)).const("Az", np.array(120, np.uint8))
        c.feed("B", u8((8,))).const("Bs", f(0.05)).const("Bz", np.array(131, np.uint8))
        cases.append(c.const("Cs", f(0.07 if op == "QLinearAdd" else 0.3))
                     .const("Cz", np.array(128, np.uint8)))
        c = Case(name + "_int8", op, ["A", "As", "Az", "B", "Bs", "Bz", "Cs", "Cz"], ["C"])
        c.feed("A", i8((4, 6))).const("As", f(0.03)).const("Az", np.array(-3, np.int8))
        c.feed("B", i8((4, 6))).const("Bs", f(0.02)).const("Bz", np.array(5, np.int8))
        cases.append(c.const("Cs", f(0.04 if op == "QLinearAdd" else 0.1))
                     .const("Cz", np.array(0, np.int8)))
    for op, extra in (("QLinearSigmoid", {}), ("QLinearLeakyRelu", {"alpha": 0.1}),
                      ("QLinearSoftmax", {"axis": -1, "opset": 13}),
                      ("QLinearSoftmax", {"axis": 1, "opset": 12})):
        for dt in (np.uint8, np.int8):
            name = "q" + op[7:].lower() + ("_opset12" if extra.get("opset") == 12 else "") + \
                "_" + np.dtype(dt).name
            c = Case(name, op, ["X", "Xs", "Xz", "Ys", "Yz"], ["Y"])
            c.attrs.update(extra)  # not as keywords: Case takes `opset` for the model's
            ys = 1.0 / 256 if op in ("QLinearSigmoid", "QLinearSoftmax") else 0.05
            c.feed("X", quantized(rng, (2, 3, 10), dt)).const("Xs", f(0.05))
            c.const("Xz", np.array(128 if dt == np.uint8 else 3, dt)).const("Ys", f(ys))
            cases.append(c.const("Yz", np.array(0 if op != "QLinearLeakyRelu" else
                                                (100 if dt == np.uint8 else -20), dt)))
    c = Case("qconcat", "QLinearConcat", ["Ys", "Yz", "X1", "X1s", "X1z", "X2", "X2s", "X2z"],
             ["Y"], axis=1)
    c.const("Ys", f(0.04)).const("Yz", np.array(125, np.uint8))
    c.feed("X1", u8((2, 3, 4))).const("X1s", f(0.03)).const("X1z", np.array(128, np.uint8))
    cases.append(c.feed("X2", u8((2, 5, 4))).const("X2s", f(0.05))
                 .const("X2z", np.array(110, np.uint8)))
    for count_pad in (0, 1):
        c = Case("qaverage_pool_count_include_pad%d" % count_pad, "QLinearAveragePool",
                 ["X", "Xs", "Xz", "Ys", "Yz"], ["Y"], kernel_shape=[3, 3], strides=[2, 2],
                 pads=[1, 1, 1, 1], count_include_pad=count_pad)
        c.feed("X", u8((1, 4, 7, 7))).const("Xs", f(0.02)).const("Xz", np.array(128, np.uint8))
        cases.append(c.const("Ys", f(0.015)).const("Yz", np.array(120, np.uint8)))
    c = Case("qglobal_average_pool", "QLinearGlobalAveragePool", ["X", "Xs", "Xz", "Ys", "Yz"],
             ["Y"])
    c.feed("X", u8((2, 6, 5, 4))).const("Xs", f(0.02)).const("Xz", np.array(128, np.uint8))
    cases.append(c.const("Ys", f(0.01)).const("Yz", np.array(126, np.uint8)))
    names = ["A", "As", "Az", "B", "Bs", "Bz", "C", "Ys", "Yz"]
    c = Case("qgemm_per_tensor", "QGemm", names, ["Y"])
    c.feed("A", u8((4, 8))).const("As", f(0.02)).const("Az", np.array(128, np.uint8))
    c.const("B", i8((8, 6))).const("Bs", f(0.01)).const("Bz", np.array(0, np.int8))
    c.const("C", rng.integers(-2000, 2000, (6,)).astype(np.int32))
    cases.append(c.const("Ys", f(0.05)).const("Yz", np.array(128, np.uint8)))
    c = Case("qgemm_per_column_float_out", "QGemm", names[:7], ["Y"], transB=1, alpha=0.5)
    c.feed("A", u8((3, 8))).const("As", f(0.03)).const("Az", np.array(120, np.uint8))
    c.const("B", i8((6, 8))).const("Bs", (0.005 + 0.01 * rng.random(6)).astype(np.float32))
    c.const("Bz", np.zeros(6, np.int8))
    cases.append(c.const("C", rng.integers(-3000, 3000, (6,)).astype(np.int32)))
    for dt, zx, zy, zz in ((np.uint8, 128, 120, 125), (np.int8, 3, -5, 0)):
        c = Case("qwhere_" + np.dtype(dt).name, "QLinearWhere",
                 ["cond", "X", "Xs", "Xz", "Y", "Ys", "Yz", "Zs", "Zz"], ["Z"])
        c.feed("cond", rng.random((2, 3, 4)) < 0.5).feed("X", quantized(rng, (2, 3, 4), dt))
        c.const("Xs", f(0.02)).const("Xz", np.array(zx, dt)).feed("Y", quantized(rng, (4,), dt))
        c.const("Ys", f(0.03)).const("Yz", np.array(zy, dt)).const("Zs", f(0.025))
        cases.append(c.const("Zz", np.array(zz, dt)))
    c = Case("ms_qlinear_conv", "QLinearConv",
             ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"], pads=[1, 1], group=2)
    c.feed("x", u8((1, 4, 9))).const("xs", f(0.02)).const("xz", np.array(128, np.uint8))
    c.const("w", i8((6, 2, 3))).const("ws", (0.005 + 0.01 * rng.random(6)).astype(np.float32))
    c.const("wz", np.zeros(6, np.int8)).const("ys", f(0.03)).const("yz", np.array(120, np.uint8))
    cases.append(c.const("b", rng.integers(-500, 500, (6,)).astype(np.int32)))
    return cases + quantize_domain_cases(rng)


def numpy_qcases():
    """QLinearReduceMean and MulInteger, which ONNX Runtime has no CPU kernel for (so it never
    writes them into a model it saves for the CPU), against numpy: (case, outputs) pairs."""
    rng = np.random.default_rng(20261130)
    f = lambda v: np.array(v, np.float32)
    out = []
    for dt, axes, keep in ((np.uint8, [1], 1), (np.int8, [-1], 0), (np.uint8, [0, 2], 0)):
        c = Case("qreduce_mean_%s_axes%s_keep%d" % (np.dtype(dt).name,
                                                   "_".join(str(a) for a in axes), keep),
                 "QLinearReduceMean", ["X", "Xs", "Xz", "Ys", "Yz"], ["Y"], axes=axes,
                 keepdims=keep)
        c.feed("X", quantized(rng, (3, 5, 7), dt)).const("Xs", f(0.05))
        c.const("Xz", np.array(128 if dt == np.uint8 else -2, dt)).const("Ys", f(0.02))
        c.const("Yz", np.array(130 if dt == np.uint8 else 4, dt))
        x, xs, xz, ys, yz = [a for _, a in c.feeds + c.consts]
        m = ((x.astype(np.float64) - xz) * xs).mean(axis=tuple(axes), keepdims=bool(keep))
        info = np.iinfo(dt)
        y = np.clip(np.round(m / ys) + yz, info.min, info.max).astype(dt)
        out.append((c, {"Y": y}))
    c = Case("mul_integer", "MulInteger", ["A", "Az", "B", "Bz"], ["C"])
    c.feed("A", quantized(rng, (2, 3, 5), np.uint8)).const("Az", np.array(128, np.uint8))
    c.feed("B", quantized(rng, (5,), np.uint8)).const("Bz", np.array(100, np.uint8))
    a, b = c.feeds[0][1].astype(np.int32) - 128, c.feeds[1][1].astype(np.int32) - 100
    out.append((c, {"C": a * b}))
    return out


def quantize_domain_cases(rng):
    """com.microsoft QuantizeLinear and DequantizeLinear, which ONNX Runtime's quantizer writes
    for 16-bit types before opset 21: single nodes, and a 16-bit QDQ Conv as it writes it."""
    f = lambda v: np.array(v, np.float32)
    cases = []
    for dt, zp in ((np.int16, -300), (np.uint16, 30000)):
        name = np.dtype(dt).name
        c = Case("ms_quantize_" + name, "QuantizeLinear", ["x", "s", "z"], ["y"])
        c.feed("x", rand(rng, (3, 40), 4.0)).const("s", f(0.001))
        cases.append(c.const("z", np.array(zp, dt)))
        c = Case("ms_dequantize_%s_per_axis" % name, "DequantizeLinear", ["x", "s", "z"], ["y"],
                 axis=1)
        info = np.iinfo(dt)
        c.feed("x", rng.integers(info.min, info.max, (2, 3, 5), endpoint=True).astype(dt))
        c.const("s", f([0.001, 0.0002, 0.003]))
        cases.append(c.const("z", np.array([zp, 0, zp // 2], dt)))
    c = Case("ms_quantize_uint8_no_zero_point", "QuantizeLinear", ["x", "s"], ["y"])
    cases.append(c.feed("x", rand(rng, (4, 6))).const("s", f(0.01)))
    # x -> Q/DQ (int16) -> Conv with int8 per-channel weights -> Q/DQ (uint16) -> y.
    c = Case("qdq16_conv", "QuantizeLinear", ["x", "xs", "xz"], ["xq"])
    c.graph_outputs = ["y"]
    q = lambda x, s, z, y: helper.make_node("QuantizeLinear", [x, s, z], [y], domain=MS)
    dq = lambda x, s, z, y, **a: helper.make_node("DequantizeLinear", [x, s, z], [y], domain=MS,
                                                  **a)
    c.extra = [dq("xq", "xs", "xz", "xd"), dq("w", "ws", "wz", "wd", axis=0),
               helper.make_node("Conv", ["xd", "wd", "b"], ["c"], pads=[1, 1]),
               q("c", "cs", "cz", "cq"), dq("cq", "cs", "cz", "y")]
    c.feed("x", rand(rng, (1, 3, 12))).const("xs", f(0.0002)).const("xz", np.array(0, np.int16))
    c.const("w", quantized(rng, (4, 3, 3), np.int8))
    c.const("ws", (0.002 + 0.004 * rng.random(4)).astype(np.float32))
    c.const("wz", np.zeros(4, np.int8)).const("b", rand(rng, (4,), 0.1))
    cases.append(c.const("cs", f(0.0001)).const("cz", np.array(32768, np.uint16)))
    return cases


def save_with_ort(model, case_dir, level):
    """case_dir/model.onnx: `model` as ONNX Runtime saves it at `level`; an empty
    test_data_set_0 beside it."""
    env = dict(os.environ)
    env.setdefault("NODE_PATH", os.path.expanduser("~/.cache/recur-bench/ort/node_modules"))
    shutil.rmtree(case_dir, ignore_errors=True)
    os.makedirs(os.path.join(case_dir, "test_data_set_0"))
    with tempfile.TemporaryDirectory() as tmp:
        onnx.save(model, os.path.join(tmp, "model.onnx"))
        subprocess.run(["node", os.path.join(HERE, "ort_optimize.js"),
                        os.path.join(tmp, "model.onnx"), os.path.join(case_dir, "model.onnx"),
                        level], check=True, env=env, stderr=subprocess.DEVNULL)
    return case_dir


def write_ort_set(case_dir, x, output):
    """test_data_set_0 of case_dir: input x (as "x") and ONNX Runtime's `output` for it."""
    y = ort_outputs([(case_dir, [("x", x)])])[0][output]
    for kind, name, a in (("input", "x", x), ("output", output, y)):
        with open(os.path.join(case_dir, "test_data_set_0", kind + "_0.pb"), "wb") as fh:
            fh.write(numpy_helper.from_array(a, name).SerializeToString())
    return case_dir


def qdq_saved_case(out_dir):
    """A QDQ model (Conv, Sigmoid, Add, Transpose, MatMul between Q/DQ pairs) as ONNX Runtime
    saves it: QLinearConv, QLinearSigmoid, QLinearAdd, QLinearMatMul."""
    rng = np.random.default_rng(7)
    f = lambda v: np.array(v, np.float32)
    inits = [numpy_helper.from_array(a, n) for n, a in (
        ("s", f(0.02)), ("z", np.array(128, np.uint8)), ("s2", f(0.03)),
        ("z2", np.array(120, np.uint8)), ("wq", quantized(rng, (8, 4, 3), np.uint8)),
        ("ws", f(0.01)), ("wz", np.array(128, np.uint8)),
        ("mq", quantized(rng, (8, 16), np.uint8)), ("ms", f(0.002)))]
    q = lambda x, s, z, y: helper.make_node("QuantizeLinear", [x, s, z], [y])
    dq = lambda x, s, z, y: helper.make_node("DequantizeLinear", [x, s, z], [y])
    nodes = [q("x", "s", "z", "xq"), dq("xq", "s", "z", "xd"), dq("wq", "ws", "wz", "wd"),
             helper.make_node("Conv", ["xd", "wd"], ["c"], pads=[1, 1]),
             q("c", "s2", "z2", "cq"), dq("cq", "s2", "z2", "cd"),
             helper.make_node("Sigmoid", ["cd"], ["sg"]), q("sg", "s", "z", "sq"),
             dq("sq", "s", "z", "sd"), helper.make_node("Add", ["sd", "cd"], ["a"]),
             q("a", "s2", "z2", "aq"), dq("aq", "s2", "z2", "ad"),
             helper.make_node("Transpose", ["ad"], ["t"], perm=[0, 2, 1]),
             q("t", "s2", "z2", "tq"), dq("tq", "s2", "z2", "td"), dq("mq", "ms", "wz", "md"),
             helper.make_node("MatMul", ["td", "md"], ["mm"]), q("mm", "s", "z", "mmq"),
             dq("mmq", "s", "z", "y")]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", F, [1, 4, 16])],
                              [helper.make_tensor_value_info("y", F, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    case_dir = save_with_ort(model, os.path.join(out_dir, "ort_saved_qdq"), "extended")
    return write_ort_set(case_dir, rand(rng, (1, 4, 16)), "y")


def qdq_saved_nhwc_case(out_dir):
    """A quantized CNN (QDQ around Conv, MaxPool, AveragePool, GlobalAveragePool) as ONNX
    Runtime saves it at its default level, 'all': its NHWC forms between two Transposes
    (com.microsoft QLinearConv, QLinearAveragePool and QLinearGlobalAveragePool with
    channels_last=1, NhwcMaxPool). The output stays uint8, compared within one step."""
    rng = np.random.default_rng(11)
    f = lambda v: np.array(v, np.float32)
    inits = [numpy_helper.from_array(a, n) for n, a in (
        ("s", f(0.02)), ("z", np.array(128, np.uint8)), ("ws", f(0.01)),
        ("wz", np.array(0, np.int8)))]
    nodes = []

    def qdq(x, y, last=False):
        nodes.append(helper.make_node("QuantizeLinear", [x, "s", "z"], [y + "_q"]))
        if not last:
            nodes.append(helper.make_node("DequantizeLinear", [y + "_q", "s", "z"], [y]))

    def conv(x, y, cin, cout, k):
        w = "W_" + y
        inits.append(numpy_helper.from_array(
            rng.integers(-60, 60, (cout, cin, k, k)).astype(np.int8), w))
        nodes.append(helper.make_node("DequantizeLinear", [w, "ws", "wz"], [w + "d"]))
        nodes.append(helper.make_node("Conv", [x, w + "d"], [y + "_f"], pads=[k // 2] * 4))
        qdq(y + "_f", y)

    qdq("x", "xd")
    conv("xd", "c1", 16, 32, 3)
    nodes.append(helper.make_node("MaxPool", ["c1"], ["p_f"], kernel_shape=[2, 2],
                                  strides=[2, 2]))
    qdq("p_f", "p")
    conv("p", "c2", 32, 32, 3)
    nodes.append(helper.make_node("AveragePool", ["c2"], ["ap_f"], kernel_shape=[3, 3],
                                  pads=[1, 1, 1, 1], count_include_pad=1))
    qdq("ap_f", "ap")
    conv("ap", "c3", 32, 32, 1)
    nodes.append(helper.make_node("GlobalAveragePool", ["c3"], ["g_f"]))
    qdq("g_f", "y", last=True)
    graph = helper.make_graph(
        nodes, "qdq_nhwc", [helper.make_tensor_value_info("x", F, [1, 16, 20, 20])],
        [helper.make_tensor_value_info("y_q", TensorProto.UINT8, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    case_dir = save_with_ort(model, os.path.join(out_dir, "ort_saved_qdq_nhwc"), "all")
    saved = onnx.load(os.path.join(case_dir, "model.onnx"))
    nhwc = {n.op_type for n in saved.graph.node
            if n.op_type == "NhwcMaxPool" or any(a.name == "channels_last" and a.i == 1
                                                 for a in n.attribute)}
    assert nhwc == {"QLinearConv", "NhwcMaxPool", "QLinearAveragePool",
                    "QLinearGlobalAveragePool"}, nhwc
    return write_ort_set(case_dir, rand(rng, (1, 16, 20, 20), 2.0), "y_q")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(HERE, "..", "tests", "data", "contrib"))
    ap.add_argument("--fp16-out",
                    default=os.path.join(HERE, "..", "tests", "data", "contrib_fp16"))
    ap.add_argument("--qlinear-out",
                    default=os.path.join(HERE, "..", "tests", "data", "qlinear"))
    ap.add_argument("--optimized-out",
                    default=os.path.join(HERE, "..", "tests", "data", "ort_optimized"))
    ap.add_argument("--experimental-out",
                    default=os.path.join(HERE, "..", "tests", "data", "experimental"))
    ap.add_argument("--only-experimental", action="store_true",
                    help="write only the experimental operators' cases (exp_*)")
    args = ap.parse_args()
    ecases = experimental_cases()
    edirs = [write(args.experimental_out, c) for c in ecases]
    for d, c, outs in zip(edirs, ecases, ort_outputs([(d, c.feeds) for d, c in zip(edirs, ecases)])):
        write_outputs(d, c, outs)
        print("wrote", os.path.relpath(d))
    if args.only_experimental:
        return
    rng = np.random.default_rng(20261128)
    cases = (fused_conv_cases(rng) + fused_gemm_cases(rng) + fused_matmul_cases(rng) +
             gelu_cases(rng) + norm_cases(rng) + integer_matmul_cases(rng))
    dirs = [write(args.out, c) for c in cases]
    results = ort_outputs([(d, c.feeds) for d, c in zip(dirs, cases)])
    for d, c, outs in zip(dirs, cases, results):
        write_outputs(d, c, outs)
        print("wrote", os.path.relpath(d))
    print("wrote", os.path.relpath(bias_add_case(args.out, rng)))
    chain = chain_case(rng)
    chain_dir = write(args.out, chain)
    write_outputs(chain_dir, chain, ort_outputs([(chain_dir, chain.feeds)])[0])
    print("wrote", os.path.relpath(chain_dir))
    sub = subgraph_case(rng)
    sub_dir = write(args.out, sub)
    write_outputs(sub_dir, sub, ort_outputs([(sub_dir, sub.feeds)])[0])
    print("wrote", os.path.relpath(sub_dir))
    for d in torch_cases(args.out):
        print("wrote", os.path.relpath(d))
    acases = (attention_cases() + embed_layer_norm_cases() + matmul_nbits_cases() +
              rotary_embedding_cases() + group_query_attention_cases() +
              quantized_attention_cases() + quantized_embed_layer_norm_cases() +
              export_helper_cases())
    adirs = [write(args.out, c) for c in acases]
    for d, c, outs in zip(adirs, acases, ort_outputs([(d, c.feeds) for d, c in zip(adirs, acases)])):
        write_outputs(d, c, outs)
        print("wrote", os.path.relpath(d))
    hcases = float16_attention_cases()
    hdirs = [write(args.fp16_out, c) for c in hcases]
    for d, c, outs in zip(hdirs, hcases, ort_outputs([(d, c.feeds) for d, c in zip(hdirs, hcases)])):
        write_outputs(d, c, outs)
        print("wrote", os.path.relpath(d))
    qcases = qlinear_cases()
    qdirs = [write(args.qlinear_out, c) for c in qcases]
    for d, c, outs in zip(qdirs, qcases, ort_outputs([(d, c.feeds) for d, c in zip(qdirs, qcases)])):
        write_outputs(d, c, outs)
        print("wrote", os.path.relpath(d))
    for c, outs in numpy_qcases():
        write_outputs(write(args.qlinear_out, c), c, outs)
        print("wrote", os.path.relpath(os.path.join(args.qlinear_out, c.name)))
    print("wrote", os.path.relpath(qdq_saved_case(args.qlinear_out)))
    print("wrote", os.path.relpath(qdq_saved_nhwc_case(args.qlinear_out)))
    ort_optimized_models(args.optimized_out)


if __name__ == "__main__":
    main()
