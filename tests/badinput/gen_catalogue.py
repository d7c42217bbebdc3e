#!/usr/bin/python3
"""Writes the bad-input catalogue (issue 16) into a build folder: one folder per case and a
manifest.json that tells tests/badinput/run_case.py what to run and what must come out.

Each case is what a new user could hand recur-run: a broken file, a graph that breaks a rule,
an attribute out of range, an input that does not fit the model. Its manifest entry holds the
recur-run arguments (relative to the case's folder, which the runner copies before each run),
the exit status recur-run must end with (0 ran, 1 an output mismatch, 2 an error) and a regular
expression that must be found in what it printed: the file, node, input or attribute the
message has to name. Special files (FIFOs, symlinks, folders) are made by the runner, in the
copy, so that nothing here needs more than plain files.

usage: gen_catalogue.py OUT_DIR [--cmake FILE]   (--cmake: also write the CTest list)
"""
import json
import os
import re
import shutil
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

FLOAT = TensorProto.FLOAT
DOUBLE = TensorProto.DOUBLE
INT64 = TensorProto.INT64
INT32 = TensorProto.INT32
BOOL = TensorProto.BOOL
STRING = TensorProto.STRING

CASES = []
OUT_DIR = ""  # the absolute output folder, set by main()


def all_of(*fragments):
    """A regex that finds every fragment (literal text) on one line, in any order: the
    message must name them together."""
    return "(?m)^" + "".join("(?=.*%s)" % re.escape(f) for f in fragments)


def any_of(*fragments):
    return "|".join(re.escape(f) for f in fragments)


class Case:
    def __init__(self, kind, name, args, exit_code, expect, files=None, special=None,
                 timeout=20, note=""):
        self.kind, self.name, self.args = kind, name, args
        self.exit_code, self.expect = exit_code, expect
        self.files = files or {}  # relative path -> bytes
        self.special = special or []  # runner actions: fifo / symlink / mkdir / write
        self.timeout, self.note = timeout, note


def add(kind, name, args, exit_code, expect, **kw):
    full = "%s/%s" % (kind, name)
    assert all(c.kind + "/" + c.name != full for c in CASES), full
    CASES.append(Case(kind, name, args, exit_code, expect, **kw))


# --- Model building ------------------------------------------------------------------------


def model_bytes(nodes, inputs, outputs, inits=(), opset=14, ir=8, extra_opsets=(), vinfo=(),
                check=False):
    g = helper.make_graph(nodes, "g", inputs, outputs, list(inits), value_info=list(vinfo))
    opsets = [helper.make_opsetid("", opset)] if opset is not None else []
    opsets += [helper.make_opsetid(d, v) for d, v in extra_opsets]
    m = helper.make_model(g, opset_imports=opsets, producer_name="gen_catalogue")
    m.ir_version = ir
    if check:
        onnx.checker.check_model(m)
    return m.SerializeToString()


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def npy(arr):
    import io
    b = io.BytesIO()
    np.save(b, arr, allow_pickle=False)
    return b.getvalue()


def npy_raw(header_dict_text, data=b"", magic=b"\x93NUMPY", version=b"\x01\x00"):
    """A hand-made .npy: the header text padded as numpy pads it."""
    h = header_dict_text.encode("latin1")
    total = len(magic) + 2 + 2 + len(h) + 1
    pad = (64 - total % 64) % 64
    h = h + b" " * pad + b"\n"
    return magic + version + struct.pack("<H", len(h)) + h + data


def tensor_pb(arr, name=""):
    return numpy_helper.from_array(arr, name).SerializeToString()


def relu_model(dtype=FLOAT, shape=(2, 3)):
    """Y = Relu(X): the smallest model with one input, for input-side cases."""
    n = helper.make_node("Relu", ["X"], ["Y"], name="the_relu")
    return model_bytes([n], [vi("X", dtype, list(shape))], [vi("Y", dtype, list(shape))])


GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
NODE = {"LSTM": "the_lstm", "GRU": "the_gru", "RNN": "the_rnn"}
N_ACT = {"LSTM": 3, "GRU": 2, "RNN": 1}  # activation functions per direction


def rnn_case_files(op, H=4, I=3, T=5, N=2, D=1, attrs=None, W=None, R=None, B=None, seq=None,
                   h0=None, c0=None, P=None, x=None, x_elem=FLOAT, n_out=None, extra_in=0,
                   opset=14, hidden_size="auto", x_shape=None, drop=()):
    """An RNN-family model with X as the input and every other input an initializer, plus
    x.npy. Arguments override one piece so that each case breaks exactly one thing."""
    g = GATES[op]
    rng = np.random.default_rng(0)
    W = rng.standard_normal((D, g * H, I)).astype(np.float32) if W is None else W
    R = rng.standard_normal((D, g * H, H)).astype(np.float32) if R is None else R
    attrs = dict(attrs or {})
    if hidden_size == "auto":
        attrs.setdefault("hidden_size", H)
    elif hidden_size is not None:
        attrs["hidden_size"] = hidden_size
    if D == 2:
        attrs.setdefault("direction", "bidirectional")
    inits = [numpy_helper.from_array(W, "W"), numpy_helper.from_array(R, "R")]
    names = ["X", "W", "R"]
    opt = [("B", B), ("sequence_lens", seq), ("initial_h", h0)]
    if op == "LSTM":
        opt += [("initial_c", c0), ("P", P)]
    last = max([i for i, (_, v) in enumerate(opt) if v is not None], default=-1)
    for i, (nm, v) in enumerate(opt[: last + 1]):
        if v is None:
            names.append("")
        else:
            names.append(nm)
            inits.append(v if isinstance(v, TensorProto) else numpy_helper.from_array(v, nm))
    for k in range(extra_in):
        nm = "extra%d" % k
        names.append(nm)
        inits.append(numpy_helper.from_array(np.zeros((1,), np.float32), nm))
    outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    if n_out is not None:
        outs = (outs + ["more%d" % k for k in range(n_out)])[:n_out]
    names = [n for n in names if n not in drop]
    node = helper.make_node(op, names, outs, name=NODE[op], **attrs)
    xs = x_shape or [T, N, I]
    model = model_bytes([node], [vi("X", x_elem, xs)], [vi(o, FLOAT, None) for o in outs], inits,
                        opset=opset)
    files = {"model.onnx": model}
    xa = rng.standard_normal((T, N, I)).astype(np.float32) if x is None else x
    files["x.npy"] = npy(xa)
    return files


RUN_X = ["model.onnx", "--input", "X=x.npy", "--providers", "reference"]
RUN_X_DEFAULT = ["model.onnx", "--input", "X=x.npy"]


# --- Kinds -----------------------------------------------------------------------------------


def kind_protobuf():
    k = "protobuf"
    good = relu_model()
    model = ["model.onnx", "--random-inputs"]
    add(k, "empty_file", model, 2, "model.onnx", files={"model.onnx": b""})
    add(k, "garbage_bytes", model, 2, "model.onnx",
        files={"model.onnx": bytes(range(256)) * 4})
    add(k, "text_instead_of_binary", model, 2, "model.onnx",
        files={"model.onnx": b'ir_version: 8\ngraph { name: "g" }\n'})
    for cut in (1, 7, len(good) // 3, len(good) // 2, len(good) - 3, len(good) - 1):
        add(k, "truncated_at_%d" % cut, model, 2, "model.onnx",
            files={"model.onnx": good[:cut]})
    add(k, "npy_magic_as_model", model, 2, "model.onnx",
        files={"model.onnx": npy(np.zeros(3, np.float32))})
    add(k, "zip_magic_as_model", model, 2, "model.onnx",
        files={"model.onnx": b"PK\x03\x04" + b"\x00" * 60})
    add(k, "png_magic_as_model", model, 2, "model.onnx",
        files={"model.onnx": b"\x89PNG\r\n\x1a\n" + b"\x00" * 60})
    # A length-delimited field that claims far more bytes than the file holds.
    add(k, "huge_claimed_graph_length", model, 2, "model.onnx",
        files={"model.onnx": b"\x08\x08\x3a\xff\xff\xff\xff\x0f" + b"\x00" * 16})
    add(k, "huge_claimed_string_length", model, 2, "model.onnx",
        files={"model.onnx": b"\x12\xff\xff\xff\xff\x07abc"})
    add(k, "wrong_wire_type", model, 2, "model.onnx", files={"model.onnx": b"\x0f\x01\x02"})
    add(k, "all_zero_bytes", model, 2, "model.onnx", files={"model.onnx": b"\x00" * 64})
    add(k, "trailing_garbage", model, 2, "model.onnx", files={"model.onnx": good + b"\xff\xff"})
    add(k, "missing_file", ["nonexistent.onnx", "--random-inputs"], 2, "nonexistent.onnx")
    add(k, "directory_as_model", ["model.onnx", "--random-inputs"], 2, "model.onnx",
        special=[{"mkdir": "model.onnx/sub"}])
    add(k, "folder_without_model", ["dir"], 2, "model.onnx",
        special=[{"mkdir": "dir/test_data_set_0"}])
    add(k, "fifo_as_model", model, 2, "model.onnx", special=[{"fifo": "model.onnx"}])
    add(k, "dev_zero_as_model", ["/dev/zero", "--random-inputs"], 2, "/dev/zero")
    add(k, "dev_null_as_model", ["/dev/null", "--random-inputs"], 2, "/dev/null")
    add(k, "symlink_loop_as_model", model, 2, "model.onnx",
        special=[{"symlink": "model.onnx", "to": "model.onnx"}])
    add(k, "dangling_symlink_as_model", model, 2, "model.onnx",
        special=[{"symlink": "model.onnx", "to": "gone.onnx"}])
    add(k, "ir_version_0", model, 2, all_of("model.onnx", "ir_version"), files={"model.onnx": _ir(0)})
    add(k, "ir_version_99", model, 2, all_of("model.onnx", "IR version 99"), files={"model.onnx": _ir(99)})
    add(k, "no_graph", model, 2, "graph", files={"model.onnx": _no_graph()})
    # protobuf parses 100 levels of messages: 30 nested Ifs load, 40 are refused by name.
    add(k, "if_nested_30_deep", model + ["--input", "c=c.npy"], 0, "Y:",
        files={"model.onnx": _nested_ifs(30), "c.npy": npy(np.array(True))})
    add(k, "if_nested_40_deep", model, 2, all_of("model.onnx", "nest deeper than the 100 levels"),
        files={"model.onnx": _nested_ifs(40)})


def _nested_ifs(depth):
    """Y = Relu(X) inside `depth` Ifs, each one's then-branch holding the next."""
    def leaf():
        return helper.make_graph([helper.make_node("Relu", ["X"], ["Y"])], "leaf", [],
                                 [vi("Y", FLOAT, [2, 3])])
    g = leaf()
    for d in range(depth):
        g = helper.make_graph([helper.make_node("If", ["c"], ["Y"], then_branch=g,
                                                else_branch=leaf())], "b%d" % d, [],
                              [vi("Y", FLOAT, [2, 3])])
    return model_bytes(list(g.node), [vi("X", FLOAT, [2, 3]), vi("c", onnx.TensorProto.BOOL, [])],
                       [vi("Y", FLOAT, [2, 3])])


def _function(name, inputs, outputs, nodes, attributes=(), opset=14, extra=b""):
    """A model-local function of domain "pkg"; `extra`: raw fields onnx 1.12 cannot set
    (attribute_proto, overload), appended as a newer writer would."""
    f = onnx.FunctionProto()
    f.name, f.domain = name, "pkg"
    f.input.extend(inputs)
    f.output.extend(outputs)
    f.attribute.extend(attributes)
    f.node.extend(nodes)
    f.opset_import.extend([helper.make_opsetid("", opset)])
    if extra:
        f.ParseFromString(f.SerializeToString() + extra)
    return f


def _with_functions(functions, nodes, inputs, outputs, opset=14, ir=8):
    g = helper.make_graph(nodes, "g", inputs, outputs)
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset),
                                            helper.make_opsetid("pkg", 1)],
                          producer_name="gen_catalogue")
    m.ir_version = ir
    m.functions.extend(functions)
    return {"model.onnx": m.SerializeToString()}


def kind_functions():
    """Model-local functions (FunctionProto): each call is expanded at load, and a function
    that cannot be expanded must be refused naming the call or the function."""
    k = "functions"
    rnd = ["model.onnx", "--random-inputs"]
    X, Y = [vi("X", FLOAT, [2])], [vi("Y", FLOAT, [2])]
    neg = [helper.make_node("Neg", ["x"], ["y"])]

    def call(fn="F", ins=("X",), outs=("Y",), name="n_call", **attrs):
        return helper.make_node(fn, list(ins), list(outs), name=name, domain="pkg", **attrs)

    def m(functions, nodes, **kw):
        return _with_functions(functions, nodes, X, Y, **kw)

    add(k, "valid_call", rnd, 0, "Y:", files=m([_function("F", ["x"], ["y"], neg)], [call()]))
    add(k, "cycle", rnd, 2, all_of("cycle", "pkg.A", "pkg.B"),
        files=m([_function("A", ["x"], ["y"], [call("B", ["x"], ["y"], "in_a")]),
                 _function("B", ["x"], ["y"], [call("A", ["x"], ["y"], "in_b")])],
                [call("A")]))
    add(k, "calls_itself", rnd, 2, all_of("cycle", "pkg.F"),
        files=m([_function("F", ["x"], ["y"], [call("F", ["x"], ["y"], "again")])], [call()]))
    then_g = helper.make_graph([call("F", ["x"], ["t"], "deep")], "then", [],
                               [vi("t", FLOAT, [2])])
    else_g = helper.make_graph([helper.make_node("Neg", ["x"], ["e"])], "else", [],
                               [vi("e", FLOAT, [2])])
    add(k, "calls_itself_from_a_subgraph", rnd, 2, all_of("cycle", "pkg.F"),
        files=m([_function("F", ["x", "c"], ["y"],
                           [helper.make_node("If", ["c"], ["y"], then_branch=then_g,
                                             else_branch=else_g)])],
                [helper.make_node("Constant", [], ["C"], value=helper.make_tensor(
                    "c", TensorProto.BOOL, [], [True])), call(ins=("X", "C"))]))
    bomb = [_function("F%d" % i, ["x"], ["y"],
                      [call("F%d" % (i + 1), ["x"], ["h"], "a"),
                       call("F%d" % (i + 1), ["h"], ["y"], "b")] if i < 40 else neg)
            for i in range(41)]
    add(k, "expansion_bomb", rnd, 2, all_of("model.onnx", "nodes"),
        files=m(bomb, [call("F0")]), timeout=10)
    add(k, "too_many_inputs", rnd, 2, all_of("n_call", "pkg.F", "inputs"),
        files=m([_function("F", ["x"], ["y"], neg)], [call(ins=("X", "X"))]))
    add(k, "too_many_outputs", rnd, 2, all_of("n_call", "pkg.F", "outputs"),
        files=m([_function("F", ["x"], ["y"], neg)], [call(outs=("Y", "Z"))]))
    scaled = [helper.make_node("Constant", [], ["a"]), helper.make_node("Mul", ["x", "a"], ["y"])]
    scaled[0].attribute.extend([onnx.AttributeProto(name="value_float", ref_attr_name="alpha",
                                                    type=onnx.AttributeProto.FLOAT)])
    add(k, "attribute_of_wrong_type", rnd, 2, all_of("n_call", "'alpha'", "INT", "FLOAT"),
        files=m([_function("F", ["x"], ["y"], scaled, ["alpha"])], [call(alpha=2)]))
    add(k, "undeclared_attribute", rnd, 2, all_of("n_call", "'gain'"),
        files=m([_function("F", ["x"], ["y"], neg)], [call(gain=2.0)]))
    add(k, "undeclared_attribute_lax", rnd + ["--no-strict-schema"], 0, "Y:",
        files=m([_function("F", ["x"], ["y"], neg)], [call(gain=2.0)]))
    add(k, "body_reads_undefined_value", rnd, 2, all_of("pkg.F", "'w'"),
        files=m([_function("F", ["x"], ["y"], [helper.make_node("Add", ["x", "w"], ["y"])])],
                [call()]))
    add(k, "defined_twice", rnd, 2, all_of("'F'", "twice"),
        files=m([_function("F", ["x"], ["y"], neg)] * 2, [call()]))
    add(k, "output_never_produced", rnd, 2, all_of("pkg.F", "'lost'"),
        files=m([_function("F", ["x"], ["y", "lost"], neg)], [call()]))
    add(k, "input_listed_twice", rnd, 2, all_of("pkg.F", "'x'"),
        files=m([_function("F", ["x", "x"], ["y"], neg)], [call()]))
    add(k, "no_name", rnd, 2, all_of("model.onnx", "no name"),
        files=m([_function("", ["x"], ["y"], neg)], [call()]))
    outside = helper.make_node("Constant", [], ["Y"], name="n_c")
    outside.attribute.extend(scaled[0].attribute)
    add(k, "reference_outside_a_function", rnd, 2, all_of("n_c", "'alpha'"),
        files=m([], [outside]))
    # ReduceMean took axes as an attribute at 13 and as an input from 18.
    add(k, "opset_differs_from_the_model", rnd, 2, all_of("pkg.F", "ReduceMean-13", "ReduceMean-18"),
        files=m([_function("F", ["x"], ["y"], [helper.make_node("ReduceMean", ["x"], ["y"])],
                           opset=17)], [call()], opset=18))
    # attribute_proto (field 11) whose bytes are not an AttributeProto.
    add(k, "unreadable_attribute_default", rnd, 2, all_of("pkg.F", "default"),
        files=m([_function("F", ["x"], ["y"], neg, extra=b"\x5a\x03\xff\xff\xff")], [call()],
                ir=9))


def _ir(v):
    m = onnx.load_from_string(relu_model())
    m.ir_version = v
    return m.SerializeToString()


def _no_graph():
    m = onnx.ModelProto()
    m.ir_version = 8
    m.opset_import.add().version = 14
    return m.SerializeToString()


def kind_graph():
    k = "graph"
    rnd = ["model.onnx", "--random-inputs"]
    X = [vi("X", FLOAT, [2])]
    Y = [vi("Y", FLOAT, [2])]

    def m(nodes, inputs=X, outputs=Y, **kw):
        return {"model.onnx": model_bytes(nodes, inputs, outputs, **kw)}

    relu = lambda i, o, n: helper.make_node("Relu", [i], [o], name=n)
    add(k, "cycle_two_nodes", rnd, 2, any_of("cycle", "n_a", "n_b"),
        files=m([helper.make_node("Add", ["X", "b"], ["a"], name="n_a"),
                 relu("a", "b", "n_b"), relu("a", "Y", "n_y")]))
    add(k, "self_loop", rnd, 2, any_of("self", "cycle", "n_self"),
        files=m([helper.make_node("Add", ["X", "s"], ["s"], name="n_self"), relu("s", "Y", "n_y")]))
    add(k, "duplicate_node_output", rnd, 2, all_of("'t'"),
        files=m([relu("X", "t", "n1"), relu("X", "t", "n2"), relu("t", "Y", "n3")]))
    add(k, "node_output_is_graph_input", rnd, 2, all_of("X"),
        files=m([relu("X", "X", "n1"), relu("X", "Y", "n2")]))
    # Listing one value twice as an output is redundant, not wrong: both get its value.
    add(k, "duplicate_graph_output", rnd, 0, "Y:",
        files=m([relu("X", "Y", "n1")], outputs=Y + Y))
    add(k, "duplicate_graph_input", rnd, 2, "X",
        files=m([relu("X", "Y", "n1")], inputs=X + X))
    add(k, "dangling_node_input", rnd, 2, all_of("nowhere"),
        files=m([helper.make_node("Add", ["X", "nowhere"], ["Y"], name="n_add")]))
    add(k, "graph_output_without_producer", rnd, 2, all_of("Z"),
        files=m([relu("X", "Y", "n1")], outputs=Y + [vi("Z", FLOAT, [2])]))
    add(k, "empty_graph_unproduced_output", rnd, 2, "Y", files=m([]))
    add(k, "no_outputs", rnd, 2, all_of("model.onnx", "no outputs"), files=m([relu("X", "Y", "n1")], outputs=[]))
    add(k, "no_inputs_no_nodes", ["model.onnx"], 2, all_of("model.onnx", "no outputs"),
        files={"model.onnx": model_bytes([], [], [])})
    add(k, "empty_op_type", rnd, 2, all_of("n_empty", "op_type"),
        files=m([helper.make_node("", ["X"], ["Y"], name="n_empty")]))
    add(k, "unknown_op", rnd, 2, all_of("n_frob", "Frobnicate"),
        files=m([helper.make_node("Frobnicate", ["X"], ["Y"], name="n_frob")]))
    add(k, "unknown_domain", rnd, 2, all_of("com.example.nope"),
        files=m([helper.make_node("Relu", ["X"], ["Y"], name="n_dom", domain="com.example.nope")],
                extra_opsets=[("com.example.nope", 1)]))
    add(k, "domain_without_opset_import", rnd, 2, all_of("com.example.undeclared"),
        files=m([helper.make_node("Relu", ["X"], ["Y"], name="n_dom2",
                                  domain="com.example.undeclared")]))
    add(k, "opset_too_high", rnd, 2, all_of("opset", "99"), files=m([relu("X", "Y", "n1")], opset=99))
    add(k, "opset_absent", rnd, 2, all_of("model.onnx", "opset_import"), files=m([relu("X", "Y", "n1")], opset=None))
    add(k, "opset_zero", rnd, 2, "opset", files=m([relu("X", "Y", "n1")], opset=0))
    add(k, "opset_negative", rnd, 2, "opset", files=m([relu("X", "Y", "n1")], opset=-3))
    add(k, "ml_opset_too_high", rnd, 2, all_of("ai.onnx.ml", "42"),
        files=m([relu("X", "Y", "n1")], extra_opsets=[("ai.onnx.ml", 42)]))
    add(k, "op_newer_than_opset", rnd, 2, all_of("n_gelu", "Gelu"),
        files=m([helper.make_node("Gelu", ["X"], ["Y"], name="n_gelu")], opset=14))
    add(k, "op_removed_in_opset", rnd, 2, all_of("n_scaler", "Scaler"),
        files=m([helper.make_node("Scaler", ["X"], ["Y"], name="n_scaler")]))
    add(k, "empty_graph_input_name", rnd, 2, "name",
        files=m([relu("X", "Y", "n1")], inputs=X + [vi("", FLOAT, [2])]))
    add(k, "empty_initializer_name", rnd, 2, "initializer",
        files=m([relu("X", "Y", "n1")],
                inits=[numpy_helper.from_array(np.zeros(2, np.float32), "")]))
    add(k, "duplicate_initializer", rnd, 2, all_of("'c'"),
        files=m([helper.make_node("Add", ["X", "c"], ["Y"], name="n1")],
                inits=[numpy_helper.from_array(np.zeros(2, np.float32), "c"),
                       numpy_helper.from_array(np.ones(2, np.float32), "c")]))
    # Not sorted topologically: ONNX asks producers first, but the order carries no meaning,
    # so recur runs it (the case guards against a crash on the forward reference).
    add(k, "unsorted_nodes_run", rnd, 0, "Y:",
        files=m([relu("a", "Y", "n2"), relu("X", "a", "n1")]))
    add(k, "output_is_input", rnd, 0, "Y:",
        files=m([], inputs=[vi("Y", FLOAT, [2])], outputs=Y))
    add(k, "output_is_initializer", ["model.onnx"], 0, "Y:",
        files={"model.onnx": model_bytes([], [], Y, [numpy_helper.from_array(
            np.ones(2, np.float32), "Y")])})
    # A huge fan-out of no-op nodes must not be slow or deep-recursive.
    chain = [relu("X" if i == 0 else "c%d" % (i - 1), "c%d" % i, "r%d" % i) for i in range(3000)]
    chain.append(relu("c2999", "Y", "last"))
    add(k, "deep_chain_3000", rnd, 0, "Y:", files=m(chain))
    # Three graphs of 60,000 nodes that used to load in quadratic time (measured at 40,000:
    # 20-23 s each, two of them 3.4 GB; at 60,000 about twice that, extrapolated).
    wide = 60000
    # The memory plan's search compared every pair of values, and each slot listed the slots
    # sharing its bytes. Fan-out: 60,000 values alive together until one Sum reads them all.
    add(k, "fan_out_of_60000_into_sum", rnd, 0, "Y:",
        files=m([relu("X", "r%d" % i, "n%d" % i) for i in range(wide)] +
                [helper.make_node("Sum", ["r%d" % i for i in range(wide)], ["Y"], name="sum")]))
    add(k, "chain_of_60000_adds_of_initializers", rnd, 0, "Y:",
        files=m([helper.make_node("Add", ["X" if i == 0 else "a%d" % (i - 1), "c%d" % i],
                                  ["Y" if i == wide - 1 else "a%d" % i], name="n%d" % i)
                 for i in range(wide)],
                inits=[numpy_helper.from_array(np.full(2, i % 7, np.float32), "c%d" % i)
                       for i in range(wide)]))
    # Every value of a long chain is a graph output: what each output needs was listed per
    # output at load.
    outs = [vi("c%d" % i, FLOAT, [2]) for i in range(wide)]
    add(k, "chain_of_60000_outputs", rnd + ["--outputs", "c0,c%d" % (wide - 1)], 0,
        "(?s)c0:.*c%d:" % (wide - 1),
        files=m([relu("X" if i == 0 else "c%d" % (i - 1), "c%d" % i, "r%d" % i)
                 for i in range(wide)], outputs=outs))
    # An initializer that is also a graph input is the input's default: the declaration
    # says what may be fed (issue 16: it used to be ignored).
    two = np.array([1, -1], np.float32)

    def overridable(dims, init=two):
        return model_bytes([relu("X", "Y", "n1")], [vi("X", FLOAT, dims)], [vi("Y", FLOAT, None)],
                           [numpy_helper.from_array(init, "X")])
    feed = ["model.onnx", "--input", "X=x.npy"]
    add(k, "initializer_input_dtype_conflict", ["model.onnx"], 2,
        all_of("initializer 'X'", "int64", "float32"),
        files={"model.onnx": overridable([2], np.array([1, 2], np.int64))})
    add(k, "initializer_input_default_used", ["model.onnx"], 0, re.escape("[1, 0]"),
        files={"model.onnx": overridable([2])})
    add(k, "initializer_input_symbolic_fed_longer", feed, 0, re.escape("Y: float32[3]"),
        files={"model.onnx": overridable(["N"]), "x.npy": npy(np.ones(3, np.float32))})
    add(k, "initializer_input_fixed_fed_longer", feed, 2, all_of("'X'", "[3]", "[2]"),
        files={"model.onnx": overridable([2]), "x.npy": npy(np.ones(3, np.float32))})
    add(k, "node_without_outputs", rnd, 2, "n_noout",
        files=m([helper.make_node("Relu", ["X"], [], name="n_noout"), relu("X", "Y", "n1")]))
    add(k, "unnamed_unknown_node", rnd, 2, "Frobnicate",
        files=m([helper.make_node("Frobnicate", ["X"], ["Y"])]))


def kind_types():
    k = "types"
    rnd = ["model.onnx", "--random-inputs"]

    def one(op, ins, outs, name, **attrs):
        return helper.make_node(op, [i for i, _ in ins], outs, name=name, **attrs)

    add(k, "add_float_double", rnd, 2, all_of("n_add"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Add", ["A", "B"], ["Y"], name="n_add")],
            [vi("A", FLOAT, [2]), vi("B", DOUBLE, [2])], [vi("Y", FLOAT, [2])])})
    add(k, "add_float_int64_initializer", rnd, 2, all_of("n_add"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Add", ["A", "B"], ["Y"], name="n_add")],
            [vi("A", FLOAT, [2])], [vi("Y", FLOAT, [2])],
            [numpy_helper.from_array(np.array([1, 2], np.int64), "B")])})
    add(k, "relu_on_string", ["model.onnx"], 2, all_of("n_relu"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Relu", ["S"], ["Y"], name="n_relu")], [],
            [vi("Y", FLOAT, [1])], [helper.make_tensor("S", STRING, [1], [b"abc"])])})
    add(k, "relu_on_bool", rnd, 2, all_of("n_relu"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Relu", ["X"], ["Y"], name="n_relu")],
            [vi("X", BOOL, [2])], [vi("Y", BOOL, [2])])})
    for op in ("LSTM", "GRU", "RNN"):
        add(k, "%s_string_x" % op.lower(), ["model.onnx", "--random-inputs"], 2,
            any_of(NODE[op], "'X'", "string"),
            files=rnn_case_files(op, x_elem=STRING))
        add(k, "%s_int64_x" % op.lower(), ["model.onnx", "--random-inputs"], 2,
            any_of(NODE[op], "'X'"),
            files=rnn_case_files(op, x_elem=INT64))
        add(k, "%s_double_weights_float_x" % op.lower(), RUN_X, 2, any_of(NODE[op], "'W'"),
            files=rnn_case_files(op, W=np.zeros((1, GATES[op] * 4, 3), np.float64)))
        add(k, "%s_int_weights" % op.lower(), RUN_X, 2, any_of(NODE[op], "'R'"),
            files=rnn_case_files(op, R=np.zeros((1, GATES[op] * 4, 4), np.int32)))
    for dt, arr in (("float64", np.zeros((2, 3))), ("int32", np.zeros((2, 3), np.int32)),
                    ("bool", np.zeros((2, 3), bool)), ("uint8", np.zeros((2, 3), np.uint8))):
        add(k, "npy_%s_for_float_input" % dt, ["model.onnx", "--input", "X=x.npy"], 2,
            all_of("X"), files={"model.onnx": relu_model(), "x.npy": npy(arr)})
    add(k, "complex_input", rnd, 2, all_of("'X'", "COMPLEX64"),
        files={"model.onnx": relu_model(TensorProto.COMPLEX64)})
    add(k, "undefined_elem_type_input", rnd, 2, all_of("'X'", "no element type"),
        files={"model.onnx": relu_model(TensorProto.UNDEFINED)})
    add(k, "elem_type_999_input", rnd, 2, all_of("'X'", "999"), files={"model.onnx": relu_model(999)})
    # A sequence's element type is checked as a tensor's is (a fuzzer find: the code became
    # a DType that made tensors of no type).
    for where in ("input", "output"):
        seq999 = helper.make_sequence_type_proto(helper.make_tensor_type_proto(999, ["N"]))
        seq_float = helper.make_sequence_type_proto(helper.make_tensor_type_proto(FLOAT, ["N"]))
        x = helper.make_value_info("X", seq999 if where == "input" else seq_float)
        y = helper.make_value_info("Y", seq999 if where == "output" else seq_float)
        add(k, "sequence_elem_type_999_" + where, ["model.onnx"], 2,
            all_of("'%s'" % ("X" if where == "input" else "Y"), "999"),
            files={"model.onnx": model_bytes(
                [helper.make_node("Identity", ["X"], ["Y"], name="n_id")], [x], [y])})
    bad = TensorProto()
    bad.name, bad.data_type = "c", 999
    bad.dims.extend([2])
    bad.raw_data = b"\x00" * 8
    add(k, "initializer_dtype_999", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = TensorProto()
    bad.name, bad.data_type = "c", 0
    bad.dims.extend([2])
    add(k, "initializer_dtype_undefined", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = numpy_helper.from_array(np.zeros(2, np.float32), "c")
    bad.raw_data = b"\x00" * 5
    add(k, "initializer_raw_data_short", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = numpy_helper.from_array(np.zeros(2, np.float32), "c")
    bad.raw_data = b"\x00" * 12
    add(k, "initializer_raw_data_long", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = _raw_tensor("c", FLOAT, [2])
    bad.float_data.extend([1.0, 2.0, 3.0])
    add(k, "initializer_float_data_count", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = _raw_tensor("c", FLOAT, [2])
    bad.float_data.extend([1.0])
    add(k, "initializer_float_data_short", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = _raw_tensor("c", INT64, [2])
    bad.int64_data.extend([1])
    add(k, "initializer_int64_data_short", rnd, 2, "'c'", files={"model.onnx": _add_const(bad)})
    bad = helper.make_tensor("c", FLOAT, [2], [1.0, 2.0])
    bad.int64_data.extend([1, 2])
    # A float tensor's values are its float_data; a stray int64_data is ignored as ONNX's
    # own readers ignore it.
    add(k, "initializer_wrong_data_field", rnd, 0, "Y:", files={"model.onnx": _add_const(bad)})
    add(k, "cast_to_999", rnd, 2, all_of("n_cast"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Cast", ["X"], ["Y"], name="n_cast", to=999)],
            [vi("X", FLOAT, [2])], [vi("Y", FLOAT, [2])])})
    add(k, "cast_to_string_runs", rnd, 0, "Y: string",
        files={"model.onnx": model_bytes(
            [helper.make_node("Cast", ["X"], ["Y"], name="n_cast", to=STRING)],
            [vi("X", FLOAT, [2])], [vi("Y", STRING, [2])])})
    add(k, "matmul_int64_float", rnd, 2, all_of("n_mm"),
        files={"model.onnx": model_bytes(
            [helper.make_node("MatMul", ["A", "B"], ["Y"], name="n_mm")],
            [vi("A", FLOAT, [2, 2]), vi("B", INT64, [2, 2])], [vi("Y", FLOAT, [2, 2])])})
    add(k, "where_float_condition", rnd, 2, all_of("n_where"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Where", ["C", "A", "B"], ["Y"], name="n_where")],
            [vi("C", FLOAT, [2]), vi("A", FLOAT, [2]), vi("B", FLOAT, [2])],
            [vi("Y", FLOAT, [2])])})
    add(k, "pb_input_double_for_float", ["model.onnx", "--input", "X=x.pb"], 2, "X",
        files={"model.onnx": relu_model(), "x.pb": tensor_pb(np.zeros((2, 3)))})
    add(k, "seq_type_where_tensor", rnd, 2, "X",
        files={"model.onnx": model_bytes(
            [helper.make_node("Relu", ["X"], ["Y"], name="n_relu")],
            [helper.make_tensor_sequence_value_info("X", FLOAT, [2])], [vi("Y", FLOAT, [2])])})


def _raw_tensor(name, elem, dims):
    t = TensorProto()
    t.name, t.data_type = name, elem
    t.dims.extend(dims)
    return t


def _add_const(c):
    n = helper.make_node("Add", ["X", "c"], ["Y"], name="n_add")
    return model_bytes([n], [vi("X", FLOAT, [2])], [vi("Y", FLOAT, [2])], [c])


def kind_shapes():
    k = "shapes"
    rnd = ["model.onnx", "--random-inputs"]
    inp = ["model.onnx", "--input", "X=x.npy"]
    base = relu_model(shape=(2, 3))
    add(k, "run_rank_too_low", inp, 2, "X", files={"model.onnx": base, "x.npy": npy(
        np.zeros(6, np.float32))})
    add(k, "run_rank_too_high", inp, 2, "X", files={"model.onnx": base, "x.npy": npy(
        np.zeros((2, 3, 1), np.float32))})
    add(k, "run_wrong_fixed_dim", inp, 2, "X", files={"model.onnx": base, "x.npy": npy(
        np.zeros((2, 4), np.float32))})
    add(k, "run_scalar_for_matrix", inp, 2, "X", files={"model.onnx": base, "x.npy": npy(
        np.float32(1.0))})
    add(k, "run_zero_dim_for_fixed", inp, 2, "X", files={"model.onnx": base, "x.npy": npy(
        np.zeros((0, 3), np.float32))})
    add(k, "symbolic_dim_zero_size_ok", inp, 0, "Y:", files={
        "model.onnx": relu_model(shape=("N", 3)), "x.npy": npy(np.zeros((0, 3), np.float32))})
    add(k, "symbolic_dim_mismatch", ["model.onnx", "--input", "A=a.npy", "--input", "B=b.npy"], 2,
        any_of("n_add", "N"), files={
            "model.onnx": model_bytes([helper.make_node("Add", ["A", "B"], ["Y"], name="n_add")],
                                      [vi("A", FLOAT, ["N"]), vi("B", FLOAT, ["N"])],
                                      [vi("Y", FLOAT, ["N"])]),
            "a.npy": npy(np.zeros(2, np.float32)), "b.npy": npy(np.zeros(3, np.float32))})
    add(k, "negative_dim_declared", rnd, 2, all_of("'X'", "negative dimension"),
        files={"model.onnx": relu_model(shape=(2, -2))})
    add(k, "random_inputs_shape_negative", rnd + ["--shape", "X=2x-3"], 2, all_of("X", "-3"),
        files={"model.onnx": relu_model(shape=("N", "M"))})
    add(k, "random_inputs_shape_huge", rnd + ["--shape", "X=4611686018427387904x4"], 2,
        all_of("X", "too large"),
        files={"model.onnx": relu_model(shape=("N", "M"))})
    big = 1 << 62
    for nm, dims in (("initializer_dims_overflow", [big, big]),
                     ("initializer_dims_huge_no_data", [1 << 40]),
                     ("initializer_negative_dim", [-4]),
                     ("initializer_dims_product_overflow", [1 << 32, 1 << 32, 4])):
        t = TensorProto()
        t.name, t.data_type = "c", FLOAT
        t.dims.extend(dims)
        add(k, nm, rnd, 2, "'c'", files={"model.onnx": _add_const(t)})
    # Shape-producing operators asked for more memory than any machine has.
    huge = np.array([1 << 40, 1 << 20], np.int64)

    def shape_op(op, extra_in=(), attrs=None, inputs=None, shape_val=huge, name=None):
        name = name or "n_" + op.lower()
        ins = inputs or ["X", "s"]
        n = helper.make_node(op, ins, ["Y"], name=name, **(attrs or {}))
        inits = [numpy_helper.from_array(shape_val, "s")]
        return {"model.onnx": model_bytes([n], [vi("X", FLOAT, [1, 1])], [vi("Y", FLOAT, None)],
                                          inits)}

    add(k, "expand_huge", rnd, 2, all_of("n_expand"), files=shape_op("Expand"))
    add(k, "tile_huge", rnd, 2, all_of("n_tile"), files=shape_op("Tile"))
    add(k, "reshape_huge", rnd, 2, all_of("n_reshape"), files=shape_op("Reshape"))
    add(k, "reshape_two_minus_one", rnd, 2, all_of("n_reshape"),
        files=shape_op("Reshape", shape_val=np.array([-1, -1], np.int64)))
    add(k, "reshape_wrong_count", rnd, 2, all_of("n_reshape"),
        files=shape_op("Reshape", shape_val=np.array([3], np.int64)))
    add(k, "reshape_negative", rnd, 2, all_of("n_reshape"),
        files=shape_op("Reshape", shape_val=np.array([-5], np.int64)))
    add(k, "expand_incompatible", rnd, 2, all_of("n_expand"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Expand", ["X", "s"], ["Y"], name="n_expand")],
            [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.array([4, 3], np.int64), "s")])})
    add(k, "tile_negative_repeat", rnd, 2, all_of("n_tile"),
        files=shape_op("Tile", shape_val=np.array([-1, 2], np.int64)))
    add(k, "tile_wrong_repeats_length", rnd, 2, all_of("n_tile"),
        files=shape_op("Tile", shape_val=np.array([1, 2, 3], np.int64)))
    cos = lambda v: {"model.onnx": model_bytes(
        [helper.make_node("ConstantOfShape", ["s"], ["Y"], name="n_cos")], [],
        [vi("Y", FLOAT, None)], [numpy_helper.from_array(np.array(v, np.int64), "s")])}
    add(k, "constantofshape_huge", ["model.onnx"], 2, all_of("n_cos"), files=cos([1 << 40, 1 << 30]))
    add(k, "constantofshape_overflow", ["model.onnx"], 2, all_of("n_cos"),
        files=cos([1 << 62, 1 << 62]))
    add(k, "constantofshape_negative", ["model.onnx"], 2, all_of("n_cos"), files=cos([-2]))
    add(k, "range_huge", ["model.onnx"], 2, all_of("n_range"), files={"model.onnx": model_bytes(
        [helper.make_node("Range", ["a", "b", "d"], ["Y"], name="n_range")], [],
        [vi("Y", FLOAT, None)],
        [numpy_helper.from_array(np.array(0, np.float32), "a"),
         numpy_helper.from_array(np.array(3e38, np.float32), "b"),
         numpy_helper.from_array(np.array(1, np.float32), "d")])})
    add(k, "range_zero_delta", ["model.onnx"], 2, all_of("n_range"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Range", ["a", "b", "d"], ["Y"], name="n_range")], [],
            [vi("Y", INT64, None)],
            [numpy_helper.from_array(np.array(0, np.int64), "a"),
             numpy_helper.from_array(np.array(10, np.int64), "b"),
             numpy_helper.from_array(np.array(0, np.int64), "d")])})
    add(k, "matmul_inner_mismatch", rnd, 2, all_of("n_mm"), files={"model.onnx": model_bytes(
        [helper.make_node("MatMul", ["A", "B"], ["Y"], name="n_mm")],
        [vi("A", FLOAT, [2, 3]), vi("B", FLOAT, [4, 5])], [vi("Y", FLOAT, None)])})
    add(k, "add_not_broadcastable", rnd, 2, all_of("n_add"), files={"model.onnx": model_bytes(
        [helper.make_node("Add", ["A", "B"], ["Y"], name="n_add")],
        [vi("A", FLOAT, [2, 3]), vi("B", FLOAT, [4])], [vi("Y", FLOAT, None)])})
    add(k, "concat_rank_mismatch", rnd, 2, all_of("n_cat"), files={"model.onnx": model_bytes(
        [helper.make_node("Concat", ["A", "B"], ["Y"], name="n_cat", axis=0)],
        [vi("A", FLOAT, [2, 3]), vi("B", FLOAT, [3])], [vi("Y", FLOAT, None)])})
    add(k, "concat_axis_out_of_range", rnd, 2, all_of("n_cat", "axis"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Concat", ["A", "B"], ["Y"], name="n_cat", axis=5)],
            [vi("A", FLOAT, [2, 3]), vi("B", FLOAT, [2, 3])], [vi("Y", FLOAT, None)])})
    add(k, "gather_index_out_of_range", ["model.onnx"], 2, all_of("n_gather"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Gather", ["D", "I"], ["Y"], name="n_gather")], [],
            [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.zeros((3, 2), np.float32), "D"),
             numpy_helper.from_array(np.array([7], np.int64), "I")])})
    add(k, "gather_negative_index_out_of_range", ["model.onnx"], 2, all_of("n_gather"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Gather", ["D", "I"], ["Y"], name="n_gather")], [],
            [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.zeros((3, 2), np.float32), "D"),
             numpy_helper.from_array(np.array([-4], np.int64), "I")])})
    add(k, "transpose_bad_perm", rnd, 2, all_of("n_tr"), files={"model.onnx": model_bytes(
        [helper.make_node("Transpose", ["X"], ["Y"], name="n_tr", perm=[0, 0])],
        [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)])})
    add(k, "transpose_perm_wrong_length", rnd, 2, all_of("n_tr"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Transpose", ["X"], ["Y"], name="n_tr", perm=[1, 0, 2])],
            [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)])})
    add(k, "softmax_axis_out_of_range", rnd, 2, all_of("n_sm"), files={"model.onnx": model_bytes(
        [helper.make_node("Softmax", ["X"], ["Y"], name="n_sm", axis=4)],
        [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)])})
    add(k, "squeeze_non_one_axis", rnd, 2, all_of("n_sq"), files={"model.onnx": model_bytes(
        [helper.make_node("Squeeze", ["X", "a"], ["Y"], name="n_sq")],
        [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)],
        [numpy_helper.from_array(np.array([0], np.int64), "a")])})
    add(k, "split_sizes_wrong_sum", rnd, 2, all_of("n_split"), files={"model.onnx": model_bytes(
        [helper.make_node("Split", ["X", "s"], ["Y", "Z"], name="n_split", axis=1)],
        [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None), vi("Z", FLOAT, None)],
        [numpy_helper.from_array(np.array([1, 1], np.int64), "s")])})
    add(k, "slice_steps_zero", rnd, 2, all_of("n_slice"), files={"model.onnx": model_bytes(
        [helper.make_node("Slice", ["X", "b", "e", "a", "st"], ["Y"], name="n_slice")],
        [vi("X", FLOAT, [2, 3])], [vi("Y", FLOAT, None)],
        [numpy_helper.from_array(np.array([0], np.int64), n) for n in ("b", "a")] +
        [numpy_helper.from_array(np.array([2], np.int64), "e"),
         numpy_helper.from_array(np.array([0], np.int64), "st")])})
    add(k, "conv_kernel_larger_than_input", rnd, 2, all_of("n_conv"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Conv", ["X", "Wc"], ["Y"], name="n_conv")],
            [vi("X", FLOAT, [1, 1, 3])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.zeros((1, 1, 5), np.float32), "Wc")])})
    add(k, "conv_channel_mismatch", rnd, 2, all_of("n_conv"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Conv", ["X", "Wc"], ["Y"], name="n_conv")],
            [vi("X", FLOAT, [1, 2, 8])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.zeros((1, 3, 3), np.float32), "Wc")])})
    add(k, "gemm_shape_mismatch", rnd, 2, all_of("n_gemm"), files={"model.onnx": model_bytes(
        [helper.make_node("Gemm", ["A", "B"], ["Y"], name="n_gemm")],
        [vi("A", FLOAT, [2, 3]), vi("B", FLOAT, [2, 3])], [vi("Y", FLOAT, None)])})

    # The operators oneDNN took over on 2026-11-28 (ConvTranspose, LayerNormalization,
    # BatchNormalization) and the reference's FFT, Einsum GEMM and STFT signal rank.
    add(k, "conv_transpose_pads_leave_no_output", rnd, 2, all_of("n_ct", "no output"),
        files={"model.onnx": model_bytes(
            [helper.make_node("ConvTranspose", ["X", "Wt"], ["Y"], name="n_ct", pads=[4, 4])],
            [vi("X", FLOAT, [1, 2, 2])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones((2, 3, 3), np.float32), "Wt")])})
    add(k, "conv_transpose_channel_mismatch", rnd, 2, all_of("n_ct"),
        files={"model.onnx": model_bytes(
            [helper.make_node("ConvTranspose", ["X", "Wt"], ["Y"], name="n_ct")],
            [vi("X", FLOAT, [1, 2, 5])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones((3, 3, 3), np.float32), "Wt")])})
    # An output_padding past stride + end pad: oneDNN cannot express it, the reference runs it.
    add(k, "conv_transpose_output_padding_past_stride_runs", rnd, 0, "Y:",
        files={"model.onnx": model_bytes(
            [helper.make_node("ConvTranspose", ["X", "Wt"], ["Y"], name="n_ct", strides=[2],
                              output_padding=[3])],
            [vi("X", FLOAT, [1, 2, 5])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones((2, 3, 3), np.float32), "Wt")])})
    # Scale claimed at load for a symbolic last dimension, which turns out 5 at run time.
    add(k, "layer_norm_scale_does_not_cover_run_shape", inp, 2, all_of("n_ln", "Scale"),
        files={"model.onnx": model_bytes(
            [helper.make_node("LayerNormalization", ["X", "g"], ["Y"], name="n_ln")],
            [vi("X", FLOAT, [2, "D"])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones(8, np.float32), "g")], opset=17),
            "x.npy": npy(np.ones((2, 5), np.float32))})
    add(k, "batch_norm_parameter_count_wrong", rnd, 2, all_of("n_bn"),
        files={"model.onnx": model_bytes(
            [helper.make_node("BatchNormalization", ["X", "s", "b", "m", "v"], ["Y"],
                              name="n_bn")],
            [vi("X", FLOAT, [1, 3, 4])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones(n, np.float32), nm)
             for nm, n in (("s", 3), ("b", 3), ("m", 2), ("v", 3))], opset=15)})
    add(k, "einsum_empty_summed_label_runs", rnd, 0, "Y:",
        files={"model.onnx": model_bytes(
            [helper.make_node("Einsum", ["A", "B"], ["Y"], name="n_es", equation="ij,jk->ik")],
            [vi("A", FLOAT, [3, 0]), vi("B", FLOAT, [0, 4])], [vi("Y", FLOAT, None)])})
    # Constant operands with no rows or no columns: Y is zeros, or empty (a MatMul of B [0, 4]
    # left Y unwritten on the oneDNN kernel, a Gemm of B [4, 0] copied from a null scratch).
    add(k, "matmul_constant_b_of_no_rows_gives_zeros", rnd, 0,
        re.escape("Y: float32[3,4]  min 0  max 0"),
        files={"model.onnx": model_bytes(
            [helper.make_node("MatMul", ["A", "B"], ["Y"], name="n_mm")],
            [vi("A", FLOAT, [3, 0])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones((0, 4), np.float32), "B")])})
    add(k, "gemm_constant_b_of_no_columns_runs", rnd, 0, re.escape("Y: float32[3,0]"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Gemm", ["A", "B", "C"], ["Y"], name="n_gemm")],
            [vi("A", FLOAT, [3, 4])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.ones((4, 0), np.float32), "B"),
             numpy_helper.from_array(np.ones(0, np.float32), "C")])})
    # Global pools over an empty plane: the average of nothing is 0 (the reference's rule), the
    # maximum an error; oneDNN's kernel refused both as a window of size 0.
    add(k, "global_average_pool_of_empty_plane_gives_zeros", rnd, 0,
        re.escape("Y: float32[1,3,1,1]  min 0  max 0"),
        files={"model.onnx": model_bytes(
            [helper.make_node("GlobalAveragePool", ["X"], ["Y"], name="n_gap")],
            [vi("X", FLOAT, [1, 3, 0, 8])], [vi("Y", FLOAT, None)])})
    add(k, "global_max_pool_of_empty_plane", rnd, 2, all_of("n_gmp", "empty"),
        files={"model.onnx": model_bytes(
            [helper.make_node("GlobalMaxPool", ["X"], ["Y"], name="n_gmp")],
            [vi("X", FLOAT, [1, 3, 0, 8])], [vi("Y", FLOAT, None)])})
    add(k, "dft_length_huge_over_one_sample_runs", rnd, 0, "Y:",
        files={"model.onnx": model_bytes(
            [helper.make_node("DFT", ["X", "L"], ["Y"], name="n_dft", axis=1)],
            [vi("X", FLOAT, [1, 1, 1])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.array((1 << 22) - 1, np.int64), "L")], opset=17)})
    add(k, "stft_signal_rank_four", rnd, 2, all_of("n_stft", "signal"),
        files={"model.onnx": model_bytes(
            [helper.make_node("STFT", ["X", "st", "w"], ["Y"], name="n_stft")],
            [vi("X", FLOAT, [1, 64, 1, 1])], [vi("Y", FLOAT, None)],
            [numpy_helper.from_array(np.array(4, np.int64), "st"),
             numpy_helper.from_array(np.ones(16, np.float32), "w")], opset=17)})


RNN_OPS = ("LSTM", "GRU", "RNN")


def kind_rnn():
    for op in RNN_OPS:
        k = op.lower()
        nd = NODE[op]
        g = GATES[op]
        f = lambda **kw: rnn_case_files(op, **kw)
        hs = lambda *more: all_of(nd, *more)
        add(k, "valid_baseline", RUN_X, 0, "Y_h:", files=f())
        add(k, "hidden_size_zero", RUN_X, 2, hs("hidden_size"), files=f(hidden_size=0))
        add(k, "hidden_size_negative", RUN_X, 2, hs("hidden_size"), files=f(hidden_size=-4))
        add(k, "hidden_size_mismatch_W", RUN_X, 2, hs("hidden_size"), files=f(hidden_size=5))
        add(k, "hidden_size_2pow62_zero_weights", RUN_X, 2, hs("hidden_size"),
            files=f(hidden_size=1 << 62, W=np.zeros((1, 0, 3), np.float32),
                    R=np.zeros((1, 0, 0), np.float32)))
        add(k, "hidden_size_2pow31_zero_weights", RUN_X, 2, hs("hidden_size"),
            files=f(hidden_size=1 << 31, W=np.zeros((1, 0, 3), np.float32),
                    R=np.zeros((1, 0, 0), np.float32)))
        add(k, "hidden_size_int64_max", RUN_X, 2, hs("hidden_size"),
            files=f(hidden_size=(1 << 63) - 1))
        add(k, "hidden_size_absent_inferred", RUN_X, 0, "Y_h:", files=f(hidden_size=None))
        add(k, "W_wrong_gate_count", RUN_X, 2, hs("W"),
            files=f(W=np.zeros((1, (g + 1) * 4, 3), np.float32)))
        add(k, "W_wrong_input_size", RUN_X, 2, any_of(nd, "'X'", "'W'"),
            files=f(W=np.zeros((1, g * 4, 7), np.float32)))
        add(k, "W_rank_2", RUN_X, 2, hs("W"), files=f(W=np.zeros((g * 4, 3), np.float32)))
        add(k, "R_wrong_hidden", RUN_X, 2, hs("R"), files=f(R=np.zeros((1, g * 4, 5), np.float32)))
        add(k, "R_rank_4", RUN_X, 2, hs("R"),
            files=f(R=np.zeros((1, g * 4, 4, 1), np.float32)))
        add(k, "B_wrong_length", RUN_X, 2, hs("B"), files=f(B=np.zeros((1, g * 4), np.float32)))
        add(k, "B_rank_1", RUN_X, 2, hs("B"), files=f(B=np.zeros((2 * g * 4,), np.float32)))
        add(k, "direction_invalid", RUN_X, 2, hs("direction"),
            files=f(attrs={"direction": "sideways"}))
        add(k, "direction_empty", RUN_X, 2, hs("direction"), files=f(attrs={"direction": ""}))
        add(k, "direction_wrong_case", RUN_X, 2, hs("direction"),
            files=f(attrs={"direction": "Forward"}))
        add(k, "layout_2", RUN_X, 2, hs("layout"), files=f(attrs={"layout": 2}))
        add(k, "layout_negative", RUN_X, 2, hs("layout"), files=f(attrs={"layout": -1}))
        add(k, "seq_lens_too_long", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([5, 6], np.int32)))
        add(k, "seq_lens_negative", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([-1, 5], np.int32)))
        add(k, "seq_lens_int64", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([5, 5], np.int64)))
        add(k, "seq_lens_float", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([5, 5], np.float32)))
        add(k, "seq_lens_wrong_length", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([5, 5, 5], np.int32)))
        add(k, "seq_lens_rank_2", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([[5, 5]], np.int32)))
        add(k, "seq_lens_int32_max", RUN_X, 2, hs("sequence_lens"),
            files=f(seq=np.array([2 ** 31 - 1, 1], np.int32)))
        add(k, "initial_h_wrong_shape", RUN_X, 2, hs("initial_h"),
            files=f(h0=np.zeros((1, 2, 5), np.float32)))
        add(k, "initial_h_wrong_batch", RUN_X, 2, hs("initial_h"),
            files=f(h0=np.zeros((1, 3, 4), np.float32)))
        add(k, "initial_h_rank_2", RUN_X, 2, hs("initial_h"),
            files=f(h0=np.zeros((2, 4), np.float32)))
        add(k, "initial_h_double", RUN_X, 2, hs("initial_h"),
            files=f(h0=np.zeros((1, 2, 4), np.float64)))
        add(k, "activation_unknown", RUN_X, 2, hs("Swish"),
            files=f(attrs={"activations": ["Swish"] * N_ACT[op]}))
        add(k, "activations_too_many", RUN_X, 2, hs("activations"),
            files=f(attrs={"activations": ["Tanh"] * 7}))
        add(k, "activations_empty_name", RUN_X, 2, hs("activation ''"),
            files=f(attrs={"activations": [""] * N_ACT[op]}))
        # Values no function takes are accepted, not refused: ONNX does not call them an
        # error, and the project's own tests give them on purpose (tests/providers/cuda/
        # cudnn_claim_test.cc, "lstm beta only"). The cases check that they are harmless.
        add(k, "activation_alpha_extra_accepted", RUN_X, 0, "Y_h:",
            files=f(attrs={"activations": ["LeakyRelu"] * N_ACT[op],
                           "activation_alpha": [0.1] * 9}))
        add(k, "activation_beta_extra_accepted", RUN_X, 0, "Y_h:",
            files=f(attrs={"activations": ["Affine"] * N_ACT[op], "activation_alpha": [1.0] *
                           N_ACT[op], "activation_beta": [0.5] * (N_ACT[op] + 1)}))
        # Fewer values than the functions take is allowed: the rest get ONNX's defaults.
        add(k, "activation_alpha_fewer_runs", RUN_X, 0, "Y_h:",
            files=f(attrs={"activations": ["LeakyRelu"] * N_ACT[op], "activation_alpha": [0.2]}))
        add(k, "clip_negative", RUN_X, 2, hs("clip"), files=f(attrs={"clip": -1.0}))
        add(k, "clip_nan", RUN_X, 2, hs("clip"), files=f(attrs={"clip": float("nan")}))
        add(k, "bidirectional_unidirectional_weights", RUN_X, 2, hs("direction"),
            files=f(attrs={"direction": "bidirectional"}))
        add(k, "forward_with_bidirectional_weights", RUN_X, 2, hs("direction"),
            files=f(W=np.zeros((2, g * 4, 3), np.float32), R=np.zeros((2, g * 4, 4), np.float32)))
        add(k, "x_rank_2", ["model.onnx", "--input", "X=x.npy"], 2, any_of(nd, "'X'"),
            files=f(x=np.zeros((5, 3), np.float32), x_shape=["T", "I"]))
        add(k, "x_rank_4", ["model.onnx", "--input", "X=x.npy"], 2, any_of(nd, "'X'"),
            files=f(x=np.zeros((5, 2, 3, 1), np.float32), x_shape=["T", "N", "I", "K"]))
        add(k, "x_zero_steps", ["model.onnx", "--input", "X=x.npy"], 0, "Y_h:",
            files=f(x=np.zeros((0, 2, 3), np.float32), x_shape=["T", 2, 3]))
        add(k, "x_zero_batch", ["model.onnx", "--input", "X=x.npy"], 0, "Y_h:",
            files=f(x=np.zeros((5, 0, 3), np.float32), x_shape=[5, "N", 3]))
        add(k, "x_wrong_input_size_at_run", ["model.onnx", "--input", "X=x.npy"], 2,
            any_of(nd, "'X'"),
            files=f(x=np.zeros((5, 2, 6), np.float32), x_shape=["T", "N", "I"]))
        add(k, "unknown_attribute", RUN_X, 2, hs("frobnication"),
            files=f(attrs={"frobnication": 1}))
        add(k, "hidden_size_as_float", RUN_X, 2, hs("hidden_size"),
            files=f(hidden_size=None, attrs={"hidden_size": 4.0}))
        add(k, "hidden_size_as_string", RUN_X, 2, hs("hidden_size"),
            files=f(hidden_size=None, attrs={"hidden_size": "four"}))
        add(k, "direction_as_int", RUN_X, 2, hs("direction"), files=f(attrs={"direction": 1}))
        # 9 inputs: one more than LSTM takes, three more than GRU and RNN take.
        add(k, "extra_input", RUN_X, 2, hs("9 inputs"), files=f(seq=np.array([5, 5], np.int32),
                                                                h0=np.zeros((1, 2, 4), np.float32),
                                                                c0=np.zeros((1, 2, 4), np.float32),
                                                                P=np.zeros((1, 12), np.float32),
                                                                B=np.zeros((1, 8 * g), np.float32),
                                                                extra_in=1 if op == "LSTM" else 3))
        add(k, "extra_output", RUN_X, 2, hs("5 outputs"), files=f(n_out=5))
        add(k, "missing_W", RUN_X, 2, hs("input W"), files=_rnn_blank_input(op, 1))
        add(k, "missing_X", ["model.onnx", "--random-inputs"], 2, hs("input X"),
            files=_rnn_blank_input(op, 0))
        add(k, "W_name_unknown", RUN_X, 2, all_of("W_missing"), files=_rnn_rename_w(op))
        if op == "LSTM":
            add(k, "input_forget_5", RUN_X, 2, hs("input_forget"),
                files=f(attrs={"input_forget": 5}))
            add(k, "input_forget_negative", RUN_X, 2, hs("input_forget"),
                files=f(attrs={"input_forget": -1}))
            add(k, "peepholes_wrong_size", RUN_X, 2, hs("P"), files=f(P=np.zeros((1, 8), np.float32)))
            add(k, "peepholes_rank_1", RUN_X, 2, hs("P"), files=f(P=np.zeros((12,), np.float32)))
            add(k, "initial_c_wrong_shape", RUN_X, 2, hs("initial_c"),
                files=f(c0=np.zeros((1, 2, 3), np.float32)))
            add(k, "initial_c_wrong_batch", RUN_X, 2, hs("initial_c"),
                files=f(c0=np.zeros((1, 5, 4), np.float32)))
            add(k, "activations_two_of_three", RUN_X, 2, hs("activations"),
                files=f(attrs={"activations": ["Sigmoid", "Tanh"]}))
            add(k, "bidirectional_peepholes_unidirectional", RUN_X, 2, hs("P"),
                files=f(D=2, W=np.zeros((2, 16, 3), np.float32), R=np.zeros((2, 16, 4), np.float32),
                        P=np.zeros((1, 12), np.float32)))
        if op == "GRU":
            add(k, "linear_before_reset_7", RUN_X, 2, hs("linear_before_reset"),
                files=f(attrs={"linear_before_reset": 7}))
            add(k, "linear_before_reset_negative", RUN_X, 2, hs("linear_before_reset"),
                files=f(attrs={"linear_before_reset": -1}))
            add(k, "activations_one_of_two", RUN_X, 2, hs("activations"),
                files=f(attrs={"activations": ["Sigmoid"]}))
        if op == "RNN":
            add(k, "activations_two_for_forward", RUN_X, 2, hs("activations"),
                files=f(attrs={"activations": ["Tanh", "Relu"]}))
            add(k, "bidirectional_one_activation", RUN_X, 0, "Y_h:",
                files=f(D=2, attrs={"activations": ["Tanh"]}))
        # The same broken nodes through the default providers (oneDNN where built): a
        # provider in front of the reference must refuse them the same way.
        add(k, "hidden_size_2pow62_default_providers", RUN_X_DEFAULT, 2, hs("hidden_size"),
            files=f(hidden_size=1 << 62, W=np.zeros((1, 0, 3), np.float32),
                    R=np.zeros((1, 0, 0), np.float32)))
        add(k, "seq_lens_too_long_default_providers", RUN_X_DEFAULT, 2, hs("sequence_lens"),
            files=f(seq=np.array([5, 6], np.int32)))
        add(k, "layout_2_default_providers", RUN_X_DEFAULT, 2, hs("layout"),
            files=f(attrs={"layout": 2}))


def _rnn_blank_input(op, index):
    files = rnn_case_files(op)
    m = onnx.load_from_string(files["model.onnx"])
    m.graph.node[0].input[index] = ""
    files["model.onnx"] = m.SerializeToString()
    return files


def _rnn_rename_w(op):
    files = rnn_case_files(op)
    m = onnx.load_from_string(files["model.onnx"])
    m.graph.node[0].input[1] = "W_missing"
    files["model.onnx"] = m.SerializeToString()
    return files


def kind_attributes():
    k = "attributes"
    rnd = ["model.onnx", "--random-inputs"]

    def one(node, ins=None, outs=None, inits=()):
        ins = ins or [vi("X", FLOAT, [2, 3])]
        outs = outs or [vi(o, FLOAT, None) for o in node.output if o]
        return {"model.onnx": model_bytes([node], ins, outs, inits)}

    add(k, "relu_unknown_attribute", rnd, 2, all_of("n_relu", "bogus"),
        files=one(helper.make_node("Relu", ["X"], ["Y"], name="n_relu", bogus=3)))
    add(k, "relu_extra_input", rnd, 2, all_of("n_relu", "2 inputs"),
        files=one(helper.make_node("Relu", ["X", "X"], ["Y"], name="n_relu")))
    add(k, "relu_extra_output", rnd, 2, all_of("n_relu", "2 outputs"),
        files=one(helper.make_node("Relu", ["X"], ["Y", "Z"], name="n_relu")))
    add(k, "add_one_input", rnd, 2, all_of("n_add", "input"),
        files=one(helper.make_node("Add", ["X"], ["Y"], name="n_add")))
    add(k, "cast_missing_to", rnd, 2, all_of("n_cast", "to"),
        files=one(helper.make_node("Cast", ["X"], ["Y"], name="n_cast")))
    add(k, "cast_to_as_string", rnd, 2, all_of("n_cast", "to"),
        files=one(helper.make_node("Cast", ["X"], ["Y"], name="n_cast", to="float")))
    add(k, "concat_missing_axis", rnd, 2, all_of("n_cat", "axis"),
        files=one(helper.make_node("Concat", ["X", "X"], ["Y"], name="n_cat")))
    add(k, "concat_axis_as_float", rnd, 2, all_of("n_cat", "axis"),
        files=one(helper.make_node("Concat", ["X", "X"], ["Y"], name="n_cat", axis=0.5)))
    add(k, "transpose_perm_as_int", rnd, 2, all_of("n_tr", "'perm'", "ints", "got int"),
        files=one(helper.make_node("Transpose", ["X"], ["Y"], name="n_tr", perm=1)))
    add(k, "softmax_axis_as_string", rnd, 2, all_of("n_sm", "axis"),
        files=one(helper.make_node("Softmax", ["X"], ["Y"], name="n_sm", axis="last")))
    add(k, "leakyrelu_alpha_as_ints", rnd, 2, all_of("n_lr", "alpha"),
        files=one(helper.make_node("LeakyRelu", ["X"], ["Y"], name="n_lr", alpha=[1, 2])))
    # transA is a flag; like ONNX Runtime, any non-zero value transposes, so [2,3] against
    # [3,2] no longer fits and the message says so.
    add(k, "gemm_transA_7_is_true", rnd, 2, all_of("n_gemm", "inner dimensions"),
        files=one(helper.make_node("Gemm", ["X", "B"], ["Y"], name="n_gemm", transA=7),
                  inits=[numpy_helper.from_array(np.zeros((3, 2), np.float32), "B")]))
    n = helper.make_node("Relu", ["X"], ["Y"], name="n_relu")
    n.attribute.add().name = ""
    add(k, "attribute_without_name", rnd, 2, "n_relu", files=one(n))
    n = helper.make_node("Softmax", ["X"], ["Y"], name="n_sm", axis=1)
    n.attribute.extend([helper.make_attribute("axis", 0)])
    add(k, "attribute_repeated", rnd, 2, all_of("n_sm", "axis"), files=one(n))
    n = helper.make_node("Softmax", ["X"], ["Y"], name="n_sm")
    a = n.attribute.add()
    a.name = "axis"
    add(k, "attribute_without_type_or_value", rnd, 2, all_of("n_sm", "axis"), files=one(n))
    add(k, "constant_without_value", ["model.onnx"], 2, all_of("n_const"),
        files={"model.onnx": model_bytes([helper.make_node("Constant", [], ["Y"], name="n_const")],
                                         [], [vi("Y", FLOAT, None)])})
    add(k, "constant_two_values", ["model.onnx"], 2, all_of("n_const"),
        files={"model.onnx": model_bytes([helper.make_node(
            "Constant", [], ["Y"], name="n_const", value_float=1.0, value_int=2)],
            [], [vi("Y", FLOAT, None)])})
    add(k, "split_outputs_vs_attribute", rnd, 2, all_of("n_split"),
        files={"model.onnx": model_bytes([helper.make_node("Split", ["X"], ["A", "B", "C"],
                                                     name="n_split", axis=1, num_outputs=2)],
                                   [vi("X", FLOAT, [2, 4])],
                                   [vi(o, FLOAT, None) for o in "ABC"], opset=18)})
    add(k, "lstm_activation_beta_as_int", RUN_X, 2, all_of("the_lstm", "activation_beta"),
        files=rnn_case_files("LSTM", attrs={"activation_beta": [1, 2]}))
    add(k, "lstm_clip_as_string", RUN_X, 2, all_of("the_lstm", "clip"),
        files=rnn_case_files("LSTM", attrs={"clip": "big"}))
    add(k, "gru_layout_as_float", RUN_X, 2, all_of("the_gru", "layout"),
        files=rnn_case_files("GRU", attrs={"layout": 1.0}))
    add(k, "rnn_activations_as_string", RUN_X, 2, all_of("the_rnn", "activations"),
        files=rnn_case_files("RNN", attrs={"activations": "Tanh"}))


def _graph(nodes, ins, outs, name="body", inits=()):
    return helper.make_graph(nodes, name, ins, outs, list(inits))


def kind_control():
    k = "control"
    cond_true = numpy_helper.from_array(np.array(True), "cond")

    def branch(val, n_out=1, name="b"):
        outs = ["o%d" % i for i in range(n_out)]
        nodes = [helper.make_node("Constant", [], [o], value=numpy_helper.from_array(
            np.array([val], np.float32))) for o in outs]
        return _graph(nodes, [], [vi(o, FLOAT, [1]) for o in outs], name=name)

    def if_model(then=None, els=None, cond_init=cond_true, n_out=1, node_attrs=None):
        attrs = {}
        if then is not None:
            attrs["then_branch"] = then
        if els is not None:
            attrs["else_branch"] = els
        attrs.update(node_attrs or {})
        outs = ["Y%d" % i for i in range(n_out)]
        n = helper.make_node("If", ["cond"], outs, name="n_if", **attrs)
        return {"model.onnx": model_bytes([n], [], [vi(o, FLOAT, None) for o in outs],
                                          [cond_init])}

    m = ["model.onnx"]
    add(k, "if_valid", m, 0, "Y0:", files=if_model(branch(1), branch(2)))
    add(k, "if_missing_else", m, 2, all_of("n_if", "else_branch"), files=if_model(then=branch(1)))
    add(k, "if_missing_then", m, 2, all_of("n_if", "then_branch"), files=if_model(els=branch(1)))
    add(k, "if_branch_output_count_mismatch", m, 2, all_of("n_if"),
        files=if_model(branch(1, 2), branch(2, 1)))
    add(k, "if_node_outputs_vs_branch", m, 2, all_of("n_if"),
        files=if_model(branch(1, 1), branch(2, 1), n_out=2))
    add(k, "if_cond_float", m, 2, all_of("n_if"),
        files=if_model(branch(1), branch(2), cond_init=numpy_helper.from_array(
            np.array(1.0, np.float32), "cond")))
    add(k, "if_cond_two_elements", m, 2, all_of("n_if"),
        files=if_model(branch(1), branch(2), cond_init=numpy_helper.from_array(
            np.array([True, False]), "cond")))
    add(k, "if_branch_as_int", m, 2, all_of("n_if", "then_branch"),
        files=if_model(els=branch(1), node_attrs={"then_branch": 3}))
    bad_branch = _graph([helper.make_node("Relu", ["ghost"], ["o0"], name="n_inner")], [],
                        [vi("o0", FLOAT, [1])])
    add(k, "if_branch_uses_unknown_name", m, 2, all_of("ghost"),
        files=if_model(bad_branch, branch(2)))

    # Loop: trip count M, cond, carried v; the body adds 1 to v and, where asked, emits a scan
    # output each iteration.
    def loop_model(M=np.array(3, np.int64), cond=np.array(True), body=None, scan=False,
                   n_carried=1, extra_node_outs=0, drop_m=False):
        if body is None:
            bouts = [vi("cond_out", BOOL, []), vi("v_out", FLOAT, [1])]
            bnodes = [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
                      helper.make_node("Add", ["v_in", "one"], ["v_out"], name="n_body_add")]
            if scan:
                bnodes.append(helper.make_node("Identity", ["v_out"], ["s_out"]))
                bouts.append(vi("s_out", FLOAT, [1]))
            body = helper.make_graph(
                bnodes, "body",
                [vi("iter", INT64, []), vi("cond_in", BOOL, []), vi("v_in", FLOAT, [1])],
                bouts, [numpy_helper.from_array(np.array([1], np.float32), "one")])
        inits = [numpy_helper.from_array(np.array([0], np.float32), "v0")]
        ins = ["" if drop_m else "M", "" if cond is None else "c", "v0"]
        if not drop_m:
            inits.append(numpy_helper.from_array(M, "M"))
        if cond is not None:
            inits.append(numpy_helper.from_array(cond, "c"))
        outs = ["v_final"] + (["scan"] if scan else []) + ["x%d" % i for i in range(extra_node_outs)]
        n = helper.make_node("Loop", ins, outs, name="n_loop", body=body)
        return {"model.onnx": model_bytes([n], [], [vi(o, FLOAT, None) for o in outs], inits)}

    add(k, "loop_valid", m, 0, "v_final:", files=loop_model())
    add(k, "loop_valid_scan", m, 0, "scan:", files=loop_model(scan=True))
    # A negative M runs no iteration, as in ONNX Runtime: v_final is v0 = 0, and the scan is
    # empty.
    add(k, "loop_negative_trip_count", m, 0,
        r"(?s)v_final: float32\[1\] .*\[0\]\s+scan: float32\[0,1\]",
        files=loop_model(M=np.array(-5, np.int64), scan=True))
    add(k, "loop_trip_count_float", m, 2, all_of("n_loop"),
        files=loop_model(M=np.array(3.0, np.float32)))
    add(k, "loop_trip_count_vector", m, 2, all_of("n_loop"),
        files=loop_model(M=np.array([3, 4], np.int64)))
    add(k, "loop_cond_int", m, 2, all_of("n_loop"), files=loop_model(cond=np.array(1, np.int64)))
    # No trip count and a condition that stays true: the scan output grows until the per-run
    # memory limit stops it, naming the Loop (issue 16 item 8). 64 KiB is 16384 iterations of
    # this body's 4-byte scan output, well before max_loop_iterations.
    add(k, "loop_no_trip_count_growing_scan", m + ["--memory-limit", "65536"], 2,
        all_of("n_loop", "memory_limit"), files=loop_model(drop_m=True, scan=True))
    add(k, "loop_no_trip_count_limited", m + ["--max-loop-iterations", "1000"], 2,
        all_of("n_loop", "1000"), files=loop_model(drop_m=True, scan=True))
    add(k, "loop_trip_count_over_limit", m + ["--max-loop-iterations", "10"], 2,
        all_of("n_loop", "10"), files=loop_model(M=np.array(1 << 40, np.int64)))
    short = helper.make_graph([helper.make_node("Identity", ["cond_in"], ["cond_out"])], "body",
                              [vi("iter", INT64, []), vi("cond_in", BOOL, [])],
                              [vi("cond_out", BOOL, [])])
    add(k, "loop_body_too_few_inputs", m, 2, all_of("n_loop"), files=loop_model(body=short))
    noc = helper.make_graph([helper.make_node("Add", ["v_in", "one"], ["v_out"])], "body",
                            [vi("iter", INT64, []), vi("cond_in", BOOL, []), vi("v_in", FLOAT, [1])],
                            [vi("v_out", FLOAT, [1])],
                            [numpy_helper.from_array(np.array([1], np.float32), "one")])
    add(k, "loop_body_missing_cond_output", m, 2, all_of("n_loop"), files=loop_model(body=noc))
    add(k, "loop_node_more_outputs_than_body", m, 2, all_of("n_loop"),
        files=loop_model(extra_node_outs=2))
    add(k, "loop_missing_body", m, 2, all_of("n_loop", "body"), files=_loop_without_body())
    # Scan: one scan input over axis 0 of S, carrying a sum.
    def scan_model(num_scan_inputs=1, body_ins=2, s_shape=(3, 2), axes=None):
        body = helper.make_graph(
            [helper.make_node("Add", ["acc_in", "x_in"], ["acc_out"]),
             helper.make_node("Identity", ["acc_out"], ["y_out"])], "body",
            [vi("acc_in", FLOAT, [2]), vi("x_in", FLOAT, [2])][:body_ins],
            [vi("acc_out", FLOAT, [2]), vi("y_out", FLOAT, [2])])
        attrs = {"body": body, "num_scan_inputs": num_scan_inputs}
        if axes is not None:
            attrs["scan_input_axes"] = axes
        n = helper.make_node("Scan", ["acc0", "S"], ["acc", "ys"], name="n_scan", **attrs)
        return {"model.onnx": model_bytes(
            [n], [], [vi("acc", FLOAT, None), vi("ys", FLOAT, None)],
            [numpy_helper.from_array(np.zeros(2, np.float32), "acc0"),
             numpy_helper.from_array(np.ones(s_shape, np.float32), "S")])}

    add(k, "scan_valid", m, 0, "acc:", files=scan_model())
    add(k, "scan_too_many_scan_inputs", m, 2, all_of("n_scan"), files=scan_model(num_scan_inputs=2))
    add(k, "scan_zero_scan_inputs", m, 2, all_of("n_scan"), files=scan_model(num_scan_inputs=0))
    add(k, "scan_body_input_count", m, 2, all_of("n_scan"), files=scan_model(body_ins=1))
    add(k, "scan_axis_out_of_range", m, 2, all_of("n_scan"), files=scan_model(axes=[4]))
    # The body's unnamed Add is the node that cannot run; it is named by its index.
    add(k, "scan_element_shape_mismatch", m, 2, all_of("Add_0", "[5]"),
        files=scan_model(s_shape=(3, 5)))


def _loop_without_body():
    n = helper.make_node("Loop", ["M", "", "v0"], ["v"], name="n_loop")
    return {"model.onnx": model_bytes(
        [n], [], [vi("v", FLOAT, None)],
        [numpy_helper.from_array(np.array(3, np.int64), "M"),
         numpy_helper.from_array(np.array([0], np.float32), "v0")])}


def kind_external():
    k = "external"
    rnd = ["model.onnx", "--random-inputs"]

    def ext_model(location, offset=None, length=None, dims=(4,), extra=()):
        t = TensorProto()
        t.name, t.data_type = "c", FLOAT
        t.dims.extend(dims)
        t.data_location = TensorProto.EXTERNAL
        kv = [("location", location)]
        if offset is not None:
            kv.append(("offset", str(offset)))
        if length is not None:
            kv.append(("length", str(length)))
        kv += list(extra)
        for key, val in kv:
            e = t.external_data.add()
            e.key, e.value = key, val
        n = helper.make_node("Add", ["X", "c"], ["Y"], name="n_add")
        return model_bytes([n], [vi("X", FLOAT, list(dims))], [vi("Y", FLOAT, None)], [t])

    data = np.arange(4, dtype=np.float32).tobytes()
    add(k, "valid", rnd, 0, "Y:", files={"model.onnx": ext_model("w.bin"), "w.bin": data})
    add(k, "valid_in_subfolder", rnd, 0, "Y:",
        files={"model.onnx": ext_model("sub/w.bin"), "sub/w.bin": data})
    add(k, "traversal_dotdot", rnd, 2, all_of("../outside.bin"),
        files={"model.onnx": ext_model("../outside.bin")})
    add(k, "traversal_nested_dotdot", rnd, 2, all_of("sub/../../outside.bin"),
        files={"model.onnx": ext_model("sub/../../outside.bin"), "sub/x": b""})
    # An absolute path to a file that exists (the manifest), so that only the rule refuses it.
    manifest = os.path.join(OUT_DIR, "manifest.json")
    add(k, "absolute_path", rnd, 2, all_of("'c'", manifest, "absolute path"),
        files={"model.onnx": ext_model(manifest)})
    add(k, "symlink_out", rnd, 2, all_of("w.bin"), files={"model.onnx": ext_model("w.bin")},
        special=[{"symlink": "w.bin", "to": "{root}/outside.bin"}])
    add(k, "symlinked_folder_out", rnd, 2, all_of("sub/w.bin"),
        files={"model.onnx": ext_model("sub/w.bin")},
        special=[{"symlink": "sub", "to": "{root}"}])
    add(k, "missing_file", rnd, 2, all_of("gone.bin"), files={"model.onnx": ext_model("gone.bin")})
    add(k, "empty_location", rnd, 2, all_of("'c'"), files={"model.onnx": ext_model("")})
    add(k, "no_location", rnd, 2, all_of("'c'"),
        files={"model.onnx": ext_model("w.bin")[:0] or _ext_no_location()})
    add(k, "location_is_folder", rnd, 2, all_of("wdir"), files={"model.onnx": ext_model("wdir")},
        special=[{"mkdir": "wdir"}])
    add(k, "location_is_fifo", rnd, 2, all_of("w.bin"), files={"model.onnx": ext_model("w.bin")},
        special=[{"fifo": "w.bin"}])
    add(k, "location_dev_zero_via_symlink", rnd, 2, all_of("w.bin"),
        files={"model.onnx": ext_model("w.bin")}, special=[{"symlink": "w.bin", "to": "/dev/zero"}])
    add(k, "offset_beyond_file", rnd, 2, all_of("w.bin"),
        files={"model.onnx": ext_model("w.bin", offset=64), "w.bin": data})
    add(k, "length_beyond_file", rnd, 2, all_of("w.bin"),
        files={"model.onnx": ext_model("w.bin", length=64, dims=(16,)), "w.bin": data})
    add(k, "file_shorter_than_tensor", rnd, 2, all_of("w.bin"),
        files={"model.onnx": ext_model("w.bin", dims=(8,)), "w.bin": data})
    add(k, "length_vs_dims", rnd, 2, all_of("'c'"),
        files={"model.onnx": ext_model("w.bin", length=8), "w.bin": data})
    add(k, "huge_offset", rnd, 2, all_of("w.bin", "9223372036854775807"),
        files={"model.onnx": ext_model("w.bin", offset=(1 << 63) - 1), "w.bin": data})
    add(k, "offset_plus_length_overflow", rnd, 2, all_of("w.bin"),
        files={"model.onnx": ext_model("w.bin", offset=(1 << 63) - 8, length=16), "w.bin": data})
    add(k, "offset_over_int64", rnd, 2, all_of("offset"),
        files={"model.onnx": ext_model("w.bin", offset=1 << 64), "w.bin": data})
    add(k, "negative_offset", rnd, 2, all_of("offset"),
        files={"model.onnx": ext_model("w.bin", offset=-4), "w.bin": data})
    # Numbers with a tail: read as their leading digits, these would load data from where
    # the file never said.
    add(k, "offset_with_tail", rnd, 2, all_of("'c'", "offset '0abc'"),
        files={"model.onnx": ext_model("w.bin", offset="0abc"), "w.bin": data})
    add(k, "length_with_tail", rnd, 2, all_of("'c'", "length '16 bytes'"),
        files={"model.onnx": ext_model("w.bin", length="16 bytes"), "w.bin": data})
    add(k, "offset_hex", rnd, 2, all_of("'c'", "offset '0x0'"),
        files={"model.onnx": ext_model("w.bin", offset="0x0"), "w.bin": data})
    add(k, "offset_empty", rnd, 2, all_of("'c'", "offset ''"),
        files={"model.onnx": ext_model("w.bin", offset=""), "w.bin": data})
    add(k, "length_not_a_number", rnd, 2, all_of("length"),
        files={"model.onnx": ext_model("w.bin", length="sixteen"), "w.bin": data})
    add(k, "huge_dims_small_file", rnd, 2, all_of("'c'"),
        files={"model.onnx": ext_model("w.bin", dims=(1 << 40,)), "w.bin": data})


def _ext_no_location():
    t = TensorProto()
    t.name, t.data_type = "c", FLOAT
    t.dims.extend([4])
    t.data_location = TensorProto.EXTERNAL
    n = helper.make_node("Add", ["X", "c"], ["Y"], name="n_add")
    return model_bytes([n], [vi("X", FLOAT, [4])], [vi("Y", FLOAT, None)], [t])


def kind_npy():
    k = "npy"
    base = relu_model()
    run = ["model.onnx", "--input", "X=x.npy"]
    good = np.zeros((2, 3), np.float32).tobytes()

    def c(name, blob, expect, exit_code=2):
        add(k, name, run, exit_code, expect, files={"model.onnx": base, "x.npy": blob})

    hdr = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }"
    c("valid", npy_raw(hdr, good), "Y:", 0)
    c("empty_file", b"", "x.npy")
    c("bad_magic", npy_raw(hdr, good, magic=b"\x93NUMPZ"), "x.npy")
    c("text_file", b"1 2 3\n4 5 6\n", "x.npy")
    c("version_9", npy_raw(hdr, good, version=b"\x09\x00"), "x.npy")
    c("header_len_beyond_file", b"\x93NUMPY\x01\x00\xff\xff{'descr'", "x.npy")
    c("header_not_a_dict", npy_raw("['<f4', False, (2, 3)]", good), "x.npy")
    c("header_missing_shape", npy_raw("{'descr': '<f4', 'fortran_order': False, }", good), "x.npy")
    c("header_missing_descr", npy_raw("{'fortran_order': False, 'shape': (2, 3), }", good), "x.npy")
    c("negative_dim", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (-2, 3), }",
                              good), all_of("x.npy", "-2"))
    c("overflowing_dim", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999, 3), }", good),
        all_of("x.npy"))
    c("overflowing_product", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296), }", good),
        all_of("x.npy"))
    c("dim_not_number", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x), }",
                                good), all_of("x.npy"))
    c("shape_not_tuple", npy_raw("{'descr': '<f4', 'fortran_order': False, 'shape': [2, 3], }",
                                 good), all_of("x.npy"))
    c("fortran_order", npy_raw("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 3), }",
                               good), all_of("x.npy", "Fortran"))
    c("big_endian", npy_raw("{'descr': '>f4', 'fortran_order': False, 'shape': (2, 3), }", good),
      all_of("x.npy"))
    # numpy strings read (string-label classifiers need them), so a float input refuses them.
    c("unicode_dtype", npy(np.array([["a", "b", "c"]] * 2)), all_of("'X'", "string", "float32"))
    c("unicode_not_a_code_point", npy_raw(
        "{'descr': '<U1', 'fortran_order': False, 'shape': (1,), }", b"\x00\x00\x11\x00"),
        all_of("x.npy", "not Unicode"))
    c("unicode_zero_width", npy_raw(
        "{'descr': '<U0', 'fortran_order': False, 'shape': (1000000000000,), }", b""),
        all_of("x.npy", "no width"))
    c("bytes_width_beyond_file", npy_raw(
        "{'descr': '|S100000', 'fortran_order': False, 'shape': (1000000,), }", good),
        all_of("x.npy", "shorter than the shape"))
    c("complex_dtype", npy(np.zeros((2, 3), np.complex64)), all_of("x.npy"))
    c("structured_dtype", npy_raw(
        "{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2, 3), }", good),
        all_of("x.npy"))
    c("unknown_descr", npy_raw("{'descr': '<q9', 'fortran_order': False, 'shape': (2, 3), }",
                               good), all_of("x.npy"))
    c("truncated_data", npy_raw(hdr, good[:-5]), all_of("x.npy"))
    c("no_data", npy_raw(hdr, b""), all_of("x.npy"))
    # numpy's own reader ignores bytes after the array too.
    c("trailing_data_ignored", npy_raw(hdr, good + b"\x00" * 8), "Y:", 0)
    c("huge_shape_tiny_file", npy_raw(
        "{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000, 1000), }", good),
        all_of("x.npy"))
    c("shape_mismatch_with_model", npy(np.zeros((3, 2), np.float32)), all_of("X"))
    add(k, "missing_file", run, 2, "x.npy", files={"model.onnx": base})
    add(k, "folder", run, 2, "x.npy", files={"model.onnx": base}, special=[{"mkdir": "x.npy"}])
    add(k, "fifo", run, 2, "x.npy", files={"model.onnx": base}, special=[{"fifo": "x.npy"}])
    add(k, "dev_zero", ["model.onnx", "--input", "X=/dev/zero"], 2, "/dev/zero",
        files={"model.onnx": base})
    add(k, "unknown_extension", ["model.onnx", "--input", "X=x.txt"], 2, "x.txt",
        files={"model.onnx": base, "x.txt": b"1 2 3"})
    add(k, "unknown_input_name", ["model.onnx", "--random-inputs", "--input", "Q=x.npy"], 2,
        all_of("'Q'"),
        files={"model.onnx": base, "x.npy": npy(np.zeros((2, 3), np.float32))})
    add(k, "input_given_twice", run + ["--input", "X=x.npy"], 2, "X",
        files={"model.onnx": base, "x.npy": npy(np.zeros((2, 3), np.float32))})
    add(k, "input_without_equals", ["model.onnx", "--input", "x.npy"], 2, "--input",
        files={"model.onnx": base})
    add(k, "missing_input", ["model.onnx"], 2, all_of("'X'"), files={"model.onnx": base})
    add(k, "pb_input_garbage", ["model.onnx", "--input", "X=x.pb"], 2, "x.pb",
        files={"model.onnx": base, "x.pb": b"\xff\xff\xff\xff"})
    add(k, "pb_input_shape_mismatch", ["model.onnx", "--input", "X=x.pb"], 2, "X",
        files={"model.onnx": base, "x.pb": tensor_pb(np.zeros((5,), np.float32))})
    add(k, "pb_input_raw_data_short", ["model.onnx", "--input", "X=x.pb"], 2, "x.pb",
        files={"model.onnx": base, "x.pb": _short_raw_pb()})
    add(k, "nan_input_runs", run, 0, "Y:", files={"model.onnx": base, "x.npy": npy(
        np.full((2, 3), np.nan, np.float32))})


def _short_raw_pb():
    t = numpy_helper.from_array(np.zeros((2, 3), np.float32))
    t.raw_data = t.raw_data[:7]
    return t.SerializeToString()


def kind_testdir():
    k = "testdir"
    base = relu_model()
    x = np.array([[-1, 0, 1], [2, -3, 4]], np.float32)
    y = np.maximum(x, 0)

    def folder(inputs, outputs, extra=None):
        files = {"t/model.onnx": base}
        for i, a in enumerate(inputs):
            files["t/test_data_set_0/input_%d.pb" % i] = a if isinstance(a, bytes) else tensor_pb(a)
        for i, a in enumerate(outputs):
            files["t/test_data_set_0/output_%d.pb" % i] = (a if isinstance(a, bytes)
                                                           else tensor_pb(a))
        files.update(extra or {})
        return files

    t = ["t"]
    add(k, "valid", t, 0, "PASS", files=folder([x], [y]))
    add(k, "mismatch", t, 1, "FAIL", files=folder([x], [y + 1]))
    add(k, "no_expected_outputs", t, 2, all_of("output"), files=folder([x], []))
    add(k, "no_data_sets", t, 2, "test_data_set", files={"t/model.onnx": base})
    add(k, "too_many_inputs", t, 2, "input_1", files=folder([x, x], [y]))
    # input_0.pb names B, so X is the one missing.
    add(k, "too_few_inputs", t, 2, "'X'", files={
        "t/model.onnx": model_bytes([helper.make_node("Add", ["X", "B"], ["Y"], name="n_add")],
                                    [vi("X", FLOAT, [2, 3]), vi("B", FLOAT, [2, 3])],
                                    [vi("Y", FLOAT, [2, 3])]),
        "t/test_data_set_0/input_0.pb": tensor_pb(x, "B"),
        "t/test_data_set_0/output_0.pb": tensor_pb(y)})
    add(k, "too_many_outputs", t, 1, all_of("output 1", "not produced"), files=folder([x], [y, y]))
    add(k, "corrupt_input_pb", t, 2, "input_0.pb", files=folder([b"\xff\xfe\xfd"], [y]))
    add(k, "corrupt_output_pb", t, 2, "output_0.pb", files=folder([x], [b"\xff\xfe\xfd"]))
    add(k, "empty_input_pb", t, 2, all_of("input_0.pb", "data_type 0"), files=folder([b""], [y]))
    add(k, "output_dtype_mismatch", t, 1, "FAIL", files=folder([x], [y.astype(np.float64)]))
    add(k, "output_shape_mismatch", t, 1, "FAIL", files=folder([x], [y.reshape(3, 2)]))
    add(k, "input_dtype_mismatch", t, 2, "X", files=folder([x.astype(np.float64)], [y]))
    add(k, "nan_expected_value_given", t, 1, "FAIL", files=folder([x], [np.full_like(y, np.nan)]))
    add(k, "data_set_is_a_file", t, 2, "no test_data_set_",
        files={"t/model.onnx": base, "t/test_data_set_0": b"not a folder"})
    add(k, "input_pb_is_fifo", t, 2, "input_0.pb", files=folder([], [y]),
        special=[{"fifo": "t/test_data_set_0/input_0.pb"}])
    add(k, "input_pb_is_folder", t, 2, "input_0.pb", files=folder([], [y]),
        special=[{"mkdir": "t/test_data_set_0/input_0.pb"}])
    add(k, "model_missing", t, 2, "model.onnx",
        files={"t/test_data_set_0/input_0.pb": tensor_pb(x)})
    # int64 outputs must compare exactly: 2^60 and 2^60 + 1 are the same double.
    m64 = model_bytes([helper.make_node("Identity", ["X"], ["Y"], name="n_id")],
                      [vi("X", INT64, [2])], [vi("Y", INT64, [2])])
    big = np.array([1 << 60, 5], np.int64)
    add(k, "int64_off_by_one_at_2pow60", t, 1, "FAIL", files={
        "t/model.onnx": m64, "t/test_data_set_0/input_0.pb": tensor_pb(big),
        "t/test_data_set_0/output_0.pb": tensor_pb(big + np.array([1, 0], np.int64))})
    add(k, "int64_exact_match", t, 0, "PASS", files={
        "t/model.onnx": m64, "t/test_data_set_0/input_0.pb": tensor_pb(big),
        "t/test_data_set_0/output_0.pb": tensor_pb(big)})
    add(k, "uint64_off_by_one_at_2pow63", t, 1, "FAIL", files={
        "t/model.onnx": model_bytes([helper.make_node("Identity", ["X"], ["Y"], name="n_id")],
                                    [vi("X", TensorProto.UINT64, [1])],
                                    [vi("Y", TensorProto.UINT64, [1])]),
        "t/test_data_set_0/input_0.pb": tensor_pb(np.array([1 << 63], np.uint64)),
        "t/test_data_set_0/output_0.pb": tensor_pb(np.array([(1 << 63) + 1], np.uint64))})
    add(k, "second_data_set_broken", t, 2, "test_data_set_1", files=dict(
        folder([x], [y]), **{"t/test_data_set_1/input_0.pb": b"\xff\xfe",
                             "t/test_data_set_1/output_0.pb": tensor_pb(y)}))
    # A name in input_0.pb that is no input's: fed by position, as the backend-test layout
    # numbers its files (tools/common/testdir.h).
    add(k, "named_input_unknown_fed_by_position", t, 0, "PASS",
        files=folder([tensor_pb(x, "nosuch")], [y]))
    add(k, "suite_with_broken_folder", ["--suite", "s"], 1, "FAIL", files={
        "s/a/model.onnx": b"garbage", "s/b/model.onnx": base,
        "s/b/test_data_set_0/input_0.pb": tensor_pb(x),
        "s/b/test_data_set_0/output_0.pb": tensor_pb(y)})
    add(k, "suite_missing_root", ["--suite", "nowhere"], 2, "nowhere")
    add(k, "suite_expect_fail_missing", ["--suite", "s", "--expect-fail", "list.txt"], 2,
        "list.txt", files={"s/b/model.onnx": base})


def kind_cli():
    k = "cli"
    base = {"model.onnx": relu_model()}
    rnd = ["model.onnx", "--random-inputs"]
    # The CLI is being rewritten (CLI11): only the stable part of each message is matched,
    # the option's name.
    add(k, "threads_negative", rnd + ["--threads", "-5"], 2, "threads", files=base)
    add(k, "threads_100000", rnd + ["--threads", "100000"], 2, "threads", files=base)
    add(k, "threads_not_a_number", rnd + ["--threads", "many"], 2, "threads", files=base)
    add(k, "unknown_provider", rnd + ["--providers", "warpdrive"], 2, "warpdrive", files=base)
    add(k, "set_unknown_key", rnd + ["--set", "nosuch.key=1"], 2, "nosuch.key", files=base)
    add(k, "set_bad_value", rnd + ["--set", "cudnn.tf32=maybe"], 2, "cudnn.tf32", files=base)
    add(k, "unknown_option", rnd + ["--frobnicate"], 2, "--frobnicate", files=base)
    add(k, "no_target", ["--random-inputs"], 2, "(?i)model", files=base)


def kind_output_dir():
    k = "output-dir"
    two = model_bytes([helper.make_node("Relu", ["X"], ["a/b"], name="n1"),
                       helper.make_node("Relu", ["X"], ["a_b"], name="n2"),
                       helper.make_node("Relu", ["X"], ["a:b"], name="n3")],
                      [vi("X", FLOAT, [2])], [vi(o, FLOAT, [2]) for o in ("a/b", "a_b", "a:b")])
    base = relu_model()
    run = ["model.onnx", "--random-inputs", "--output-dir", "out"]
    add(k, "valid", run, 0, "Y.npy", files={"model.onnx": base})
    add(k, "symlink_planted", run, 2, "Y.npy", files={"model.onnx": base, "out/keep": b""},
        special=[{"symlink": "out/Y.npy", "to": "{root}/outside.bin"}])
    add(k, "existing_file", run, 2, "Y.npy", files={"model.onnx": base, "out/Y.npy": b"precious"})
    # a/b, a_b and a:b must not share a file: each gets its own (three different paths
    # written), or the run is refused. Today all three write a_b.npy.
    three_files = (r"(?s)wrote out/(\S+)\.npy\n.*wrote out/(?!\1\.npy)(\S+)\.npy\n"
                   r".*wrote out/(?!\1\.npy)(?!\2\.npy)\S+\.npy")
    add(k, "colliding_names", run, 0, three_files, files={"model.onnx": two})
    # One output listed twice cannot have two files: refused, naming it and its file.
    add(k, "output_listed_twice", run, 2, all_of("'Y'", "Y.npy"), files={"model.onnx": model_bytes(
        [helper.make_node("Relu", ["X"], ["Y"], name="n1")], [vi("X", FLOAT, [2])],
        [vi("Y", FLOAT, [2]), vi("Y", FLOAT, [2])])})
    add(k, "output_dir_is_file", run, 2, "out", files={"model.onnx": base, "out": b"a file"})
    add(k, "output_dir_symlink_to_file", run, 2, "out", files={"model.onnx": base},
        special=[{"symlink": "out", "to": "{root}/outside.bin"}])


def _map_type(key, value=FLOAT):
    t = onnx.TypeProto()
    t.map_type.key_type = key
    t.map_type.value_type.tensor_type.elem_type = value
    return t


def _map_pb(keys, values, key_type=STRING, name="features"):
    """A MapProto: keys, and one tensor per value (numpy arrays, normally scalars)."""
    m = onnx.MapProto()
    m.name, m.key_type = name, key_type
    if key_type == STRING:
        m.string_keys.extend(k.encode() for k in keys)
    else:
        m.keys.extend(keys)
    m.values.elem_type = onnx.SequenceProto.TENSOR
    for v in values:
        m.values.tensor_values.append(numpy_helper.from_array(np.asarray(v)))
    return m.SerializeToString()


def kind_maps():
    """The ai.onnx.ml map operators (ZipMap, DictVectorizer, CastMap), map-typed inputs, and
    MapProto files."""
    k = "maps"
    ml = [("ai.onnx.ml", 1)]
    rnd = ["model.onnx", "--random-inputs"]

    def dictvec(key=STRING, value=FLOAT, **attrs):
        attrs = attrs or {"string_vocabulary": ["a", "b"]}
        n = helper.make_node("DictVectorizer", ["features"], ["Y"], name="n_dv",
                             domain="ai.onnx.ml", **attrs)
        return model_bytes([n], [helper.make_value_info("features", _map_type(key, value))],
                           [vi("Y", value, None)], extra_opsets=ml)

    def zipmap(width=2, **attrs):
        n = helper.make_node("ZipMap", ["X"], ["Z"], name="n_zip", domain="ai.onnx.ml", **attrs)
        z = helper.make_value_info("Z", helper.make_sequence_type_proto(_map_type(INT64)))
        return model_bytes([n], [vi("X", FLOAT, ["N", width])], [z], extra_opsets=ml)

    def castmap(**attrs):
        n = helper.make_node("CastMap", ["M"], ["Y"], name="n_cast", domain="ai.onnx.ml",
                             **attrs)
        return model_bytes([n], [helper.make_value_info("M", _map_type(INT64, STRING))],
                           [vi("Y", FLOAT, None)], extra_opsets=ml)

    feed = ["model.onnx", "--input", "features=f.pb"]
    good = _map_pb(["a", "zz"], [np.float32(1.5), np.float32(2)])
    add(k, "dictvec_valid", feed, 0, all_of("Y: float32[1,2]"),
        files={"model.onnx": dictvec(), "f.pb": good})
    add(k, "dictvec_random_map", rnd, 0, all_of("Y: float32[1,2]"), files={"model.onnx": dictvec()})
    add(k, "map_file_garbage", feed, 2, all_of("f.pb", "MapProto"),
        files={"model.onnx": dictvec(), "f.pb": b"\xff\xff\xff\x01garbage"})
    # An empty file is a MapProto with no key type: no map, since its key type is unknown.
    add(k, "map_file_empty", feed, 2, all_of("f.pb", "key type 0"),
        files={"model.onnx": dictvec(), "f.pb": b""})
    add(k, "map_file_keys_values_count", feed, 2, all_of("f.pb", "2 keys and 1 tensor values"),
        files={"model.onnx": dictvec(), "f.pb": _map_pb(["a", "b"], [np.float32(1)])})
    add(k, "map_file_repeated_key", feed, 2, all_of("f.pb", "'a' twice"),
        files={"model.onnx": dictvec(),
               "f.pb": _map_pb(["a", "a"], [np.float32(1), np.float32(2)])})
    add(k, "map_file_float_keys", feed, 2, all_of("f.pb", "key type 1"),
        files={"model.onnx": dictvec(), "f.pb": _map_pb([1], [np.float32(1)], key_type=FLOAT)})
    add(k, "map_file_vector_value", feed, 2, all_of("f.pb", "one element"),
        files={"model.onnx": dictvec(), "f.pb": _map_pb(["a"], [np.zeros(2, np.float32)])})
    add(k, "map_file_mixed_value_dtypes", feed, 2, all_of("f.pb", "one dtype"),
        files={"model.onnx": dictvec(),
               "f.pb": _map_pb(["a", "b"], [np.float32(1), np.float64(2)])})
    add(k, "map_file_wrong_key_type", feed, 2, all_of("'features'", "map(int64, float32)"),
        files={"model.onnx": dictvec(),
               "f.pb": _map_pb([1], [np.float32(1)], key_type=INT64)})
    add(k, "map_file_wrong_value_type", feed, 2, all_of("'features'", "map(string, float64)"),
        files={"model.onnx": dictvec(), "f.pb": _map_pb(["a"], [np.float64(1)])})
    add(k, "npy_for_map_input", ["model.onnx", "--input", "features=f.npy"], 2,
        all_of("'features'", "map"),
        files={"model.onnx": dictvec(), "f.npy": npy(np.zeros(2, np.float32))})
    add(k, "tensor_pb_for_map_input", feed, 2, "f.pb",
        files={"model.onnx": dictvec(), "f.pb": tensor_pb(np.zeros(2, np.float32))})
    add(k, "dictvec_no_vocabulary", rnd, 2, all_of("n_dv", "exactly one of"),
        files={"model.onnx": dictvec(int64_vocabulary=[])})
    add(k, "dictvec_key_type_against_vocabulary", rnd, 2, all_of("n_dv", "vocabulary is string"),
        files={"model.onnx": dictvec(key=INT64)})
    add(k, "dictvec_bool_values", rnd, 2, any_of("'features'", "n_dv"),
        files={"model.onnx": dictvec(value=BOOL)})
    add(k, "map_int32_keys", rnd, 2, all_of("'features'", "int32 keys"),
        files={"model.onnx": dictvec(key=TensorProto.INT32)})
    seq_values = onnx.TypeProto()
    seq_values.map_type.key_type = STRING
    seq_values.map_type.value_type.sequence_type.elem_type.tensor_type.elem_type = FLOAT
    add(k, "map_of_sequences", rnd, 2, all_of("'features'", "numeric or string tensor type"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Identity", ["features"], ["Y"], name="n_id")],
            [helper.make_value_info("features", seq_values)], [vi("Y", FLOAT, None)])})
    add(k, "map_into_relu", rnd, 2, all_of("n_relu", "a map"),
        files={"model.onnx": model_bytes(
            [helper.make_node("Relu", ["features"], ["Y"], name="n_relu")],
            [helper.make_value_info("features", _map_type(STRING))], [vi("Y", FLOAT, None)])})
    add(k, "zipmap_valid", rnd + ["--dim", "N=3"], 0, all_of("Z: sequence of 3 map(int64, float32)"),
        files={"model.onnx": zipmap(classlabels_int64s=[4, 7])})
    add(k, "zipmap_no_labels", rnd, 2, all_of("n_zip", "exactly one of"),
        files={"model.onnx": zipmap()})
    add(k, "zipmap_width_mismatch", rnd, 2, all_of("n_zip", "3 columns for 2 class labels"),
        files={"model.onnx": zipmap(width=3, classlabels_int64s=[4, 7])})
    add(k, "zipmap_repeated_label", rnd, 2, all_of("n_zip", "given twice"),
        files={"model.onnx": zipmap(classlabels_int64s=[4, 4])})
    add(k, "zipmap_huge_batch", rnd + ["--dim", "N=100000000000"], 2, any_of("X", "n_zip"),
        files={"model.onnx": zipmap(classlabels_int64s=[4, 7])})
    mfeed = ["model.onnx", "--input", "M=m.pb"]
    add(k, "castmap_not_a_number", mfeed, 2, all_of("n_cast", "key 3", "'x1' is not a number"),
        files={"model.onnx": castmap(), "m.pb": _map_pb([3], [np.array("x1", object)],
                                                        key_type=INT64, name="M")})
    add(k, "castmap_sparse_negative_key", mfeed, 2, all_of("n_cast", "key -2 is negative"),
        files={"model.onnx": castmap(map_form="SPARSE", max_map=4),
               "m.pb": _map_pb([-2], [np.array("1", object)], key_type=INT64, name="M")})
    add(k, "castmap_huge_max_map", rnd, 2, all_of("n_cast", "max_map"),
        files={"model.onnx": castmap(map_form="SPARSE", max_map=1 << 40)})
    add(k, "castmap_unknown_cast_to", rnd, 2, all_of("n_cast", "TO_BYTES"),
        files={"model.onnx": castmap(cast_to="TO_BYTES")})


def _op_case(name, node, feeds, inits=(), exit_code=2, expect=None, opset=17, out_elem=FLOAT):
    """One node fed `feeds` ({input: array}, each a .npy): hostile values for one operator."""
    elem = {np.dtype(np.float32): FLOAT, np.dtype(np.float64): DOUBLE, np.dtype(np.int64): INT64,
            np.dtype(np.int32): INT32, np.dtype(np.int8): TensorProto.INT8,
            np.dtype(np.uint64): TensorProto.UINT64}
    ins = [vi(k, elem[v.dtype], list(v.shape)) for k, v in feeds.items()]
    if out_elem is None:  # the first input's
        out_elem = elem[next(iter(feeds.values())).dtype]
    out_elems = out_elem if isinstance(out_elem, list) else [out_elem] * len(node.output)
    outs = [vi(o, e, None) for o, e in zip(node.output, out_elems)]
    files = {"model.onnx": model_bytes([node], ins, outs, inits, opset=opset)}
    args = ["model.onnx"]
    for k, v in feeds.items():
        files[k + ".npy"] = npy(v)
        args += ["--input", "%s=%s.npy" % (k, k)]
    add("operators", name, args, exit_code, expect or all_of(node.name), files=files)


def kind_operators():
    """Operators given values at their limits: integer division by zero and INT_MIN / -1,
    counts and sizes past memory or int64, indices out of range, NaN where a count or a scale
    is read. Each is an error naming the node, or a defined result; never a signal (SIGFPE
    from an integer division is the classic one). The 2026-12-02 sweep of 106 such models,
    of which these are kept."""
    mk = helper.make_node
    i64 = lambda v: np.array(v, np.int64)  # noqa: E731
    f32 = lambda v: np.array(v, np.float32)  # noqa: E731
    c64 = lambda n, v: numpy_helper.from_array(i64(v), n)  # noqa: E731
    cf = lambda n, v: numpy_helper.from_array(f32(v), n)  # noqa: E731
    for op in ("Div", "Mod"):
        for dt in (np.int8, np.int32, np.int64):
            low = np.iinfo(dt).min
            t = np.dtype(dt).name
            _op_case("%s_%s_by_zero" % (op.lower(), t), mk(op, ["a", "b"], ["y"], name="n_op"),
                     {"a": np.array([1, low], dt), "b": np.array([0, 2], dt)},
                     expect=all_of("n_op", "by zero"), out_elem=None)
            # INT_MIN / -1 overflows: x86's idiv traps (SIGFPE); recur wraps, as numpy does.
            _op_case("%s_%s_min_by_minus_one" % (op.lower(), t),
                     mk(op, ["a", "b"], ["y"], name="n_op"),
                     {"a": np.array([low, low], dt), "b": np.array([-1, -1], dt)}, exit_code=0,
                     expect="y:", out_elem=None)
    _op_case("range_of_2_62_values", mk("Range", ["s", "l", "d"], ["y"], name="n_range"), {},
             [c64("s", 0), c64("l", 1 << 62), c64("d", 1)], out_elem=INT64)
    _op_case("range_zero_delta", mk("Range", ["s", "l", "d"], ["y"], name="n_range"), {},
             [c64("s", 0), c64("l", 10), c64("d", 0)], expect=all_of("n_range", "delta"),
             out_elem=INT64)
    _op_case("range_nan_limit", mk("Range", ["s", "l", "d"], ["y"], name="n_range"), {},
             [cf("s", 0), cf("l", np.nan), cf("d", 1)])
    _op_case("range_full_int64_span", mk("Range", ["s", "l", "d"], ["y"], name="n_range"), {},
             [c64("s", -(1 << 63)), c64("l", (1 << 63) - 1), c64("d", 1 << 62)], exit_code=0,
             expect="y:", out_elem=INT64)
    _op_case("tile_overflow", mk("Tile", ["x", "r"], ["y"], name="n_tile"),
             {"x": np.ones((2, 2), np.float32)}, [c64("r", [1 << 62, 4])])
    _op_case("expand_overflow", mk("Expand", ["x", "s"], ["y"], name="n_expand"),
             {"x": np.ones(1, np.float32)}, [c64("s", [1 << 31, 1 << 31, 4])])
    _op_case("pad_2_62", mk("Pad", ["x", "p"], ["y"], name="n_pad"),
             {"x": np.ones((2, 2), np.float32)}, [c64("p", [0, 1 << 62, 0, 0])])
    _op_case("pad_crops_past_the_start", mk("Pad", ["x", "p"], ["y"], name="n_pad"),
             {"x": np.ones((2, 2), np.float32)}, [c64("p", [0, -5, 0, 0])])
    _op_case("pad_edge_of_empty", mk("Pad", ["x", "p"], ["y"], name="n_pad", mode="edge"),
             {"x": np.ones((2, 0), np.float32)}, [c64("p", [0, 2, 0, 2])])
    _op_case("slice_int64_extremes", mk("Slice", ["x", "s", "e", "a", "st"], ["y"],
                                        name="n_slice"),
             {"x": np.arange(5, dtype=np.float32)},
             [c64("s", [(1 << 63) - 1]), c64("e", [-(1 << 63)]), c64("a", [0]),
              c64("st", [-(1 << 63)])], exit_code=0, expect="y:")
    _op_case("gather_int64_min_index", mk("Gather", ["x", "i"], ["y"], name="n_gather"),
             {"x": np.ones(5, np.float32), "i": i64([-(1 << 63)])},
             expect=all_of("n_gather", "out of range"))
    _op_case("scatternd_int64_min_index", mk("ScatterND", ["x", "i", "u"], ["y"],
                                             name="n_scatter"),
             {"x": np.ones(5, np.float32), "i": i64([[-(1 << 63)]]),
              "u": np.ones(1, np.float32)}, expect=all_of("n_scatter", "out of range"))
    _op_case("onehot_depth_2_40", mk("OneHot", ["i", "d", "v"], ["y"], name="n_onehot"),
             {"i": i64([1, 2])}, [c64("d", [1 << 40]), cf("v", [0, 1])])
    _op_case("topk_k_past_axis", mk("TopK", ["x", "k"], ["v", "i"], name="n_topk"),
             {"x": np.ones(5, np.float32)}, [c64("k", [6])], out_elem=[FLOAT, INT64])
    _op_case("resize_scale_1e9", mk("Resize", ["x", "", "s"], ["y"], name="n_resize"),
             {"x": np.ones((1, 1, 2, 2), np.float32)}, [cf("s", [1, 1, 1e9, 1e9])])
    _op_case("resize_nan_scale", mk("Resize", ["x", "", "s"], ["y"], name="n_resize"),
             {"x": np.ones((1, 1, 2, 2), np.float32)}, [cf("s", [1, 1, np.nan, 2])])
    _op_case("cast_nan_inf_to_int32", mk("Cast", ["x"], ["y"], name="n_cast", to=INT32),
             {"x": f32([np.nan, np.inf, -np.inf, 3e9])}, exit_code=0, expect="y:",
             out_elem=INT32)
    _op_case("conv_dilation_2_40", mk("Conv", ["x", "w"], ["y"], name="n_conv",
                                      dilations=[1 << 40, 1]),
             {"x": np.ones((1, 1, 4, 4), np.float32)}, [cf("w", np.ones((1, 1, 3, 3)))])
    _op_case("conv_pads_2_40", mk("Conv", ["x", "w"], ["y"], name="n_conv",
                                  pads=[1 << 40, 0, 1 << 40, 0]),
             {"x": np.ones((1, 1, 4, 4), np.float32)}, [cf("w", np.ones((1, 1, 3, 3)))])
    _op_case("maxpool_kernel_2_40", mk("MaxPool", ["x"], ["y"], name="n_pool",
                                       kernel_shape=[1 << 40, 1]),
             {"x": np.ones((1, 1, 4, 4), np.float32)})
    _op_case("space_to_depth_block_2_40", mk("SpaceToDepth", ["x"], ["y"], name="n_s2d",
                                             blocksize=1 << 40),
             {"x": np.ones((1, 4, 2, 2), np.float32)}, expect=all_of("n_s2d", "blocksize"))
    _op_case("concat_axis_2_40", mk("Concat", ["x", "x"], ["y"], name="n_concat", axis=1 << 40),
             {"x": np.ones((2, 3), np.float32)})
    _op_case("bitshift_by_64", mk("BitShift", ["a", "b"], ["y"], name="n_shift",
                                  direction="LEFT"),
             {"a": np.array([1, 1], np.uint64), "b": np.array([64, 1 << 63], np.uint64)},
             exit_code=0, expect="y:", out_elem=TensorProto.UINT64)
    _op_case("pow_zero_to_negative_int", mk("Pow", ["a", "b"], ["y"], name="n_pow"),
             {"a": i64([0, 2]), "b": i64([-1, 3])}, out_elem=INT64)
    _op_case("argmax_of_empty_axis", mk("ArgMax", ["x"], ["y"], name="n_argmax", axis=0),
             {"x": np.ones((0, 3), np.float32)}, out_elem=INT64)
    _op_case("reverse_sequence_lengths", mk("ReverseSequence", ["x", "l"], ["y"], name="n_rev",
                                            batch_axis=1, time_axis=0),
             {"x": np.ones((3, 2), np.float32), "l": i64([9, -3])})


KINDS = [kind_protobuf, kind_graph, kind_types, kind_shapes, kind_rnn, kind_attributes,
         kind_control, kind_external, kind_npy, kind_testdir, kind_cli, kind_output_dir,
         kind_functions, kind_maps, kind_operators]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    global OUT_DIR
    out = OUT_DIR = os.path.abspath(sys.argv[1])
    cmake_file = sys.argv[sys.argv.index("--cmake") + 1] if "--cmake" in sys.argv else None
    for kind in KINDS:
        kind()
    cases_dir = os.path.join(out, "cases")
    shutil.rmtree(cases_dir, ignore_errors=True)
    manifest = []
    for c in CASES:
        d = os.path.join(cases_dir, c.kind, c.name)
        os.makedirs(d, exist_ok=True)
        for rel, blob in c.files.items():
            p = os.path.join(d, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "wb") as fh:
                fh.write(blob)
        manifest.append({"name": "%s/%s" % (c.kind, c.name), "dir": d, "args": c.args,
                         "exit": c.exit_code, "expect": c.expect, "special": c.special,
                         "timeout": c.timeout})
    with open(os.path.join(out, "manifest.json"), "w") as fh:
        json.dump(manifest, fh, indent=1)
    # One file per case as well: CTest runs a case at a time, and reading one small entry
    # instead of the whole manifest is part of keeping the catalogue fast.
    entries = os.path.join(out, "entries")
    shutil.rmtree(entries, ignore_errors=True)
    os.makedirs(entries)
    for entry in manifest:
        with open(os.path.join(entries, entry["name"].replace("/", "__") + ".json"), "w") as fh:
            json.dump(entry, fh)
    if cmake_file:
        with open(cmake_file, "w") as fh:
            fh.write("set(RECUR_BADINPUT_CASES\n")
            for c in manifest:
                fh.write("  %s\n" % c["name"])
            fh.write(")\n")
    counts = {}
    for c in CASES:
        counts[c.kind] = counts.get(c.kind, 0) + 1
    print("bad-input catalogue: %d cases in %s (%s)" % (
        len(CASES), out, ", ".join("%s %d" % kv for kv in counts.items())))


if __name__ == "__main__":
    main()
