#!/usr/bin/python3
"""Writes two-operand Einsum test folders (model.onnx + test_data_set_0) into tests/data/einsum,
with expected outputs from numpy.einsum in float64.

recur's reference Einsum runs two float operands as a batched GEMM over gathered copies
(providers/reference/nn/einsum.cc); these cases cover what that gathering must get right:
batch, M, N and summed labels in any order, labels summed from one operand only, repeated
labels (diagonals), ellipses that broadcast, implicit outputs, size-1 and empty dimensions,
and transformer and attention forms. A fixed seed: the same cases on every run.

Run with /usr/bin/python3 (numpy, onnx 1.12): /usr/bin/python3 tools/einsum_oracle.py
"""
import os
import shutil

import numpy as np
import onnx
from onnx import helper, numpy_helper

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "einsum")
rng = np.random.default_rng(20261128)

# (name, equation, shape of A, shape of B)
CASES = [
    ("attention_scores", "bhid,bhjd->bhij", (2, 3, 5, 4), (2, 3, 6, 4)),
    ("attention_context", "bhij,bhjd->bhid", (2, 3, 5, 6), (2, 3, 6, 4)),
    ("matmul", "ij,jk->ik", (7, 5), (5, 3)),
    ("matmul_transposed_out", "ij,jk->ki", (7, 5), (5, 3)),
    ("batched_bmm", "bij,bjk->bik", (4, 3, 5), (4, 5, 2)),
    ("linear_layer", "btd,ed->bte", (2, 9, 6), (4, 6)),
    ("outer_product", "i,j->ij", (5,), (3,)),
    ("dot", "i,i->", (8,), (8,)),
    ("hadamard_kept", "ij,ij->ij", (3, 4), (3, 4)),
    ("sum_over_one_operand", "ij,jk->k", (4, 5), (5, 3)),
    ("label_in_one_operand_summed", "abc,cd->ad", (2, 3, 4), (4, 5)),
    ("label_in_one_operand_kept", "abc,cd->abd", (2, 3, 4), (4, 5)),
    ("diagonal_in_a", "iij,jk->ik", (4, 4, 3), (3, 2)),
    ("trace_product", "ii,ii->", (5, 5), (5, 5)),
    ("ellipsis_batch", "...ij,...jk->...ik", (2, 3, 4, 5), (2, 3, 5, 6)),
    ("ellipsis_broadcast", "...ij,...jk->...ik", (3, 1, 4, 5), (1, 2, 5, 6)),
    ("ellipsis_rank_differs", "...ij,jk->...ik", (2, 3, 4, 5), (5, 6)),
    ("implicit_output", "ij,jk", (3, 4), (4, 5)),
    ("implicit_upper_case", "iJ,Jk", (3, 4), (4, 5)),
    ("scrambled_order", "kbjm,bmnj->nbk", (3, 2, 4, 5), (2, 5, 6, 4)),
    ("relative_position", "bhqd,qkd->bhqk", (2, 2, 5, 3), (5, 7, 3)),
    ("size_one_dims", "bij,bjk->bik", (1, 1, 5), (1, 5, 1)),
    ("empty_summed", "ij,jk->ik", (3, 0), (0, 4)),
    ("empty_kept", "ij,jk->ik", (0, 3), (3, 4)),
    ("bilinear_one_batch", "bn,anm->bam", (3, 4), (2, 4, 5)),
    ("long_sum", "i,i->", (3000,), (3000,)),
    # DeepFilterNet's grouped linear layer: A read as [g][bt][i], Y written as [g][bt][h].
    ("grouped_linear", "btgi,gih->btgh", (8, 3, 8, 64), (8, 64, 32)),
]


def write_case(name, eq, a, b):
    d = os.path.join(ROOT, name)
    os.makedirs(os.path.join(d, "test_data_set_0"))
    y = np.einsum(eq, a.astype(np.float64), b.astype(np.float64)).astype(np.float32)
    node = helper.make_node("Einsum", ["a", "b"], ["y"], equation=eq)
    vi = lambda n, x: helper.make_tensor_value_info(n, onnx.TensorProto.FLOAT, x.shape)
    graph = helper.make_graph([node], name, [vi("a", a), vi("b", b)], [vi("y", y)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])
    model.ir_version = 7
    onnx.save(model, os.path.join(d, "model.onnx"))
    for k, (n, x) in enumerate([("a", a), ("b", b)]):
        with open(os.path.join(d, "test_data_set_0", "input_%d.pb" % k), "wb") as f:
            f.write(numpy_helper.from_array(x, n).SerializeToString())
    with open(os.path.join(d, "test_data_set_0", "output_0.pb"), "wb") as f:
        f.write(numpy_helper.from_array(y, "y").SerializeToString())


def main():
    shutil.rmtree(ROOT, ignore_errors=True)
    for name, eq, sa, sb in CASES:
        a = rng.standard_normal(sa).astype(np.float32)
        b = rng.standard_normal(sb).astype(np.float32)
        write_case(name, eq, a, b)


if __name__ == "__main__":
    main()
