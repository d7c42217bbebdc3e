#!/usr/bin/env python3
"""Re-declares test folders at a newer ONNX opset and checks recur runs them as before.

A model exported at an older opset is rewritten to the target opset (--opset: 22, the last of
ONNX 1.17, or 26, the newest ONNX Runtime 1.30 reads): the opset import changes, and the
operators whose signature changed on the way are rewritten to their new form (reduction `axes`
and Squeeze/Unsqueeze `axes` from attributes to inputs, Split's `num_outputs`, the `spatial`
and `is_test` attributes that BatchNormalization and Dropout dropped). An operator whose
meaning changed in a way a rewrite cannot keep (Softmax before 13 on a rank above 2) stops the
conversion with a message. The expected outputs are copied unchanged: they come from the
folder's own oracle, so the re-declared model must match them.

Usage:
  redeclare_opset.py [--opset N] --check RECUR_RUN DIR...
                                              runs each folder re-declared at N against its
                                              expected outputs, and checks its RNN nodes are
                                              placed as at opset 14 (--plan-only, every provider)
  redeclare_opset.py [--opset N] --out OUT DIR...
                                              only writes the converted folders under OUT
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import helper, numpy_helper

TARGET = 26
# The IR version that goes with each opset from 21 on (ONNX's docs/Versioning.md): a model
# declaring opset 25 at IR 10 would be one no exporter writes.
IR_FOR_OPSET = {21: 10, 22: 10, 23: 11, 24: 12, 25: 13, 26: 13}
# Versions at which `axes` moved from an attribute to an input.
AXES_INPUT_SINCE = {
    "ReduceSum": 13, "Squeeze": 13, "Unsqueeze": 13, "ReduceMean": 18, "ReduceMax": 18,
    "ReduceMin": 18, "ReduceProd": 18, "ReduceSumSquare": 18, "ReduceL1": 18, "ReduceL2": 18,
    "ReduceLogSum": 18, "ReduceLogSumExp": 18,
}
DROPPED_ATTRS = {"BatchNormalization": {"spatial", "is_test", "consumed_inputs"},
                 "Dropout": {"is_test"}}
RNN_OPS = {"LSTM", "GRU", "RNN", "StackedRNN"}


class CannotConvert(Exception):
    pass


def default_opset(model):
    for o in model.opset_import:
        if o.domain in ("", "ai.onnx"):
            return o.version
    return 1


def rewrite_node(node, opset, target, add_const, counter):
    """Rewrites `node` from `opset` to `target`; add_const(name, array) defines a constant
    the node then reads (an initializer in a graph, a Constant node in a function)."""
    op = node.op_type
    attrs = {a.name: a for a in node.attribute}
    since = AXES_INPUT_SINCE.get(op)
    if since and opset < since <= target and "axes" in attrs:
        axes = list(attrs["axes"].ints)
        name = f"{node.name or op}_axes_{counter[0]}"
        counter[0] += 1
        add_const(name, np.array(axes, np.int64))
        node.input.append(name)
        node.attribute.remove(attrs["axes"])
    if op == "Split" and opset < 18 <= target and len(node.input) < 2 and "split" not in attrs:
        node.attribute.append(helper.make_attribute("num_outputs", len(node.output)))
    if op == "Split" and opset < 13 <= target and "split" in attrs:
        name = f"{node.name or op}_split_{counter[0]}"
        counter[0] += 1
        add_const(name, np.array(list(attrs["split"].ints), np.int64))
        node.input.append(name)
        node.attribute.remove(attrs["split"])
    for a in list(node.attribute):
        if a.name in DROPPED_ATTRS.get(op, ()):
            node.attribute.remove(a)
    if op in ("Softmax", "LogSoftmax", "Hardmax") and opset < 13:
        raise CannotConvert(f"{op} before opset 13 flattens to 2-D; a rewrite cannot keep it")
    if op in ("Slice", "Pad", "Clip", "Upsample", "Resize") and opset < 11:
        raise CannotConvert(f"{op} at opset {opset} has attributes that later became inputs")
    for a in node.attribute:
        if a.type == onnx.AttributeProto.GRAPH:
            rewrite_graph(a.g, opset, target, counter)
        for g in a.graphs:
            rewrite_graph(g, opset, target, counter)


def rewrite_graph(graph, opset, target, counter):
    def add_const(name, array):
        graph.initializer.append(numpy_helper.from_array(array, name))

    for node in graph.node:
        rewrite_node(node, opset, target, add_const, counter)


def rewrite_function(fn, target, counter):
    """A model-local function's body, at its own opset, re-declared at `target`."""
    consts = []

    def add_const(name, array):
        consts.append(helper.make_node("Constant", [], [name], name=name,
                                       value=numpy_helper.from_array(array, name)))

    for node in fn.node:
        rewrite_node(node, default_opset(fn), target, add_const, counter)
    body = consts + list(fn.node)
    del fn.node[:]
    fn.node.extend(body)
    for o in fn.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target


def convert_model(model, target=TARGET):
    """`model` re-declared at `target` (not below its own opset)."""
    opset = default_opset(model)
    out = onnx.ModelProto()
    out.CopyFrom(model)
    target = max(target, opset)
    counter = [0]
    rewrite_graph(out.graph, opset, target, counter)
    for fn in out.functions:
        rewrite_function(fn, target, counter)
    for o in out.opset_import:
        if o.domain in ("", "ai.onnx"):
            o.version = target
    if not any(o.domain in ("", "ai.onnx") for o in out.opset_import):
        out.opset_import.append(helper.make_opsetid("", target))
    if target in IR_FOR_OPSET:
        out.ir_version = max(out.ir_version, IR_FOR_OPSET[target])
    return out


def convert_dir(src, dst, target=TARGET):
    """Copies the test folder `src` to `dst` with its model at `target`."""
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns("model.onnx"))
    model = onnx.load(os.path.join(src, "model.onnx"))
    onnx.save(convert_model(model, target), os.path.join(dst, "model.onnx"))


def placement(recur_run, model):
    """The provider of each RNN node when every provider is listed, as --plan-only plans it."""
    out = subprocess.run(
        [recur_run, model, "--explain", "--plan-only", "--providers",
         "cudnn,cuda-generic,onednn,reference"], capture_output=True, text=True)
    if out.returncode != 0:
        return f"error: {out.stderr.strip()}"
    rows = []
    for line in out.stdout.splitlines():
        parts = line.split()
        if len(parts) >= 3 and parts[1].split("::")[-1] in RNN_OPS:
            rows.append((parts[0], parts[1], parts[2]))
    return rows


def check(recur_run, dirs, target):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        for i, d in enumerate(dirs):
            name = os.path.basename(os.path.normpath(d))
            dst = os.path.join(tmp, f"{i}_{name}")
            try:
                convert_dir(d, dst, target)
            except CannotConvert as e:
                failures.append(f"{name}: cannot re-declare at opset {target}: {e}")
                continue
            run = subprocess.run([recur_run, dst], capture_output=True, text=True)
            if run.returncode != 0:
                failures.append(f"{name} at opset {target}: {(run.stdout + run.stderr).strip()}")
                continue
            # Placed as at opset 14 (the RNN ops' last version before 22).
            at14 = os.path.join(tmp, f"{i}_{name}_14")
            convert_dir(d, at14, 14)
            before = placement(recur_run, os.path.join(at14, "model.onnx"))
            after = placement(recur_run, os.path.join(dst, "model.onnx"))
            if before != after:
                failures.append(f"{name}: RNN placement at opset {target} differs from opset 14: "
                                f"{before} vs {after}")
    passed = len(dirs) - len(failures)
    for f in failures:
        print("FAIL", f)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("dirs", nargs="+", help="test folders (model.onnx + test_data_set_*)")
    ap.add_argument("--opset", type=int, default=TARGET, choices=sorted(IR_FOR_OPSET),
                    help=f"the opset to re-declare at (default {TARGET})")
    group = ap.add_mutually_exclusive_group(required=True)
    group.add_argument("--check", metavar="RECUR_RUN")
    group.add_argument("--out", metavar="OUT")
    args = ap.parse_args()
    dirs = [d for d in args.dirs if os.path.exists(os.path.join(d, "model.onnx"))]
    if args.check:
        return check(args.check, dirs, args.opset)
    for d in dirs:
        convert_dir(d, os.path.join(args.out, os.path.basename(os.path.normpath(d))), args.opset)
    return 0


if __name__ == "__main__":
    sys.exit(main())
