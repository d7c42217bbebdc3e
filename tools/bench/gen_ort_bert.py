#!/usr/bin/python3
"""Writes a BERT-style encoder as ONNX Runtime's transformer optimizer saves one, in its
com.microsoft operators (EmbedLayerNormalization, then per layer Attention, MatMul,
SkipLayerNormalization, MatMul, BiasGelu, MatMul, SkipLayerNormalization), with random weights:
the benchmark of recur's lowering of those operators against ONNX Runtime's own kernels
(docs/bench-cpu.md). Inputs ids, seg and mask are int32 [batch, seq].

Usage: /usr/bin/python3 tools/bench/gen_ort_bert.py OUT.onnx [--layers 12] [--hidden 256]
           [--heads 4] [--vocab 1000]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--layers", type=int, default=12)
    ap.add_argument("--hidden", type=int, default=256)
    ap.add_argument("--heads", type=int, default=4)
    ap.add_argument("--vocab", type=int, default=1000)
    args = ap.parse_args()
    rng = np.random.default_rng(1)
    H = args.hidden
    r = lambda *s: (0.05 * rng.standard_normal(s)).astype(np.float32)
    ones, zeros = np.ones(H, np.float32), np.zeros(H, np.float32)
    inits = {"word": r(args.vocab, H), "pos": r(512, H), "segemb": r(2, H), "gamma": ones,
             "beta": zeros}
    nodes = [helper.make_node("EmbedLayerNormalization",
                              ["ids", "seg", "word", "pos", "segemb", "gamma", "beta", "mask"],
                              ["h0", "mi"], domain=MS, name="emb")]
    x = "h0"
    for i in range(args.layers):
        p = "l%d_" % i
        inits.update({p + "w": r(H, 3 * H), p + "b": r(3 * H), p + "wo": r(H, H), p + "bo": r(H),
                      p + "g1": ones, p + "b1": zeros, p + "f1": r(H, 4 * H), p + "fb1": r(4 * H),
                      p + "f2": r(4 * H, H), p + "fb2": r(H), p + "g2": ones, p + "b2": zeros})
        nodes += [
            helper.make_node("Attention", [x, p + "w", p + "b", "mi"], [p + "a"], domain=MS,
                             num_heads=args.heads, name=p + "attn"),
            helper.make_node("MatMul", [p + "a", p + "wo"], [p + "ao"], name=p + "mm1"),
            helper.make_node("SkipLayerNormalization", [p + "ao", x, p + "g1", p + "b1", p + "bo"],
                             [p + "n1"], domain=MS, name=p + "sln1"),
            helper.make_node("MatMul", [p + "n1", p + "f1"], [p + "h"], name=p + "mm2"),
            helper.make_node("BiasGelu", [p + "h", p + "fb1"], [p + "gl"], domain=MS,
                             name=p + "gelu"),
            helper.make_node("MatMul", [p + "gl", p + "f2"], [p + "o"], name=p + "mm3"),
            helper.make_node("SkipLayerNormalization", [p + "o", p + "n1", p + "g2", p + "b2",
                                                        p + "fb2"], [p + "n2"], domain=MS,
                             name=p + "sln2")]
        x = p + "n2"
    ins = [helper.make_tensor_value_info(n, TensorProto.INT32, ["batch", "seq"])
           for n in ("ids", "seg", "mask")]
    graph = helper.make_graph(nodes, "bert", ins,
                              [helper.make_tensor_value_info(x, TensorProto.FLOAT, None)],
                              [numpy_helper.from_array(a, n) for n, a in inits.items()])
    model = helper.make_model(graph, ir_version=8, opset_imports=[
        helper.make_opsetid("", 17), helper.make_opsetid(MS, 1)])
    onnx.save(model, args.out)


if __name__ == "__main__":
    main()
