#!/usr/bin/python3
"""Writes model test folders (model.onnx + test_data_set_0) for the ai.onnx.ml reference
kernels into tests/data/ml. The expected outputs are written out by hand from the operators'
specifications, not computed, so that they do not share a mistake with the kernels.

  category_mapper_embedding  words -> CategoryMapper -> Gather on an embedding, as word-level
                             models such as the ONNX model zoo's BiDAF look their inputs up;
                             a second CategoryMapper maps the ids back to words.

Run with /usr/bin/python3 (numpy, onnx 1.12): /usr/bin/python3 tools/gen_ml_tests.py
"""
import os
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from test_folder import write_test_folder  # noqa: E402

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "data", "ml")


def save(name, model, feeds, expected):
    write_test_folder(os.path.join(ROOT, name), model, feeds, expected)


def category_mapper_embedding():
    # Row 0 is the unknown word's: default_int64 sends every word not in the vocabulary there.
    vocab = ["the", "cat", "sat"]
    ids = [1, 2, 3]
    embedding = np.array([[0.0, 0.0, 0.0],
                          [1.0, -1.0, 0.5],
                          [2.0, 0.25, -2.0],
                          [-3.0, 3.0, 0.75]], dtype=np.float32)
    nodes = [
        helper.make_node("CategoryMapper", ["words"], ["ids"], name="to_ids",
                         domain="ai.onnx.ml", cats_strings=vocab, cats_int64s=ids,
                         default_int64=0),
        helper.make_node("Gather", ["embedding", "ids"], ["vectors"], name="lookup", axis=0),
        helper.make_node("CategoryMapper", ["ids"], ["back"], name="to_words",
                         domain="ai.onnx.ml", cats_strings=vocab, cats_int64s=ids,
                         default_string="<unk>"),
    ]
    graph = helper.make_graph(
        nodes, "category_mapper_embedding",
        [helper.make_tensor_value_info("words", TensorProto.STRING, ["batch", "len"])],
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "len"]),
         helper.make_tensor_value_info("vectors", TensorProto.FLOAT, ["batch", "len", 3]),
         helper.make_tensor_value_info("back", TensorProto.STRING, ["batch", "len"])],
        [numpy_helper.from_array(embedding, "embedding")])
    model = helper.make_model(graph, producer_name="recur/tools/gen_ml_tests.py",
                              opset_imports=[helper.make_opsetid("", 13),
                                             helper.make_opsetid("ai.onnx.ml", 3)])
    model.ir_version = 8
    words = np.array([["the", "cat", "sat"], ["the", "dog", "The"]], dtype=object)
    want_ids = np.array([[1, 2, 3], [1, 0, 0]], dtype=np.int64)
    want_vectors = np.array([[[1.0, -1.0, 0.5], [2.0, 0.25, -2.0], [-3.0, 3.0, 0.75]],
                             [[1.0, -1.0, 0.5], [0.0, 0.0, 0.0], [0.0, 0.0, 0.0]]],
                            dtype=np.float32)
    want_back = np.array([["the", "cat", "sat"], ["the", "<unk>", "<unk>"]], dtype=object)
    save("category_mapper_embedding", model, [("words", words)],
         [("ids", want_ids), ("vectors", want_vectors), ("back", want_back)])


def main():
    category_mapper_embedding()


if __name__ == "__main__":
    main()
