#!/usr/bin/python3
"""How many ONNX backend tests ONNX Runtime (CPU, through onnxruntime-node) passes, read and
compared the way recur-run --suite reads and compares them, so the two counts can be set side by
side.

  /usr/bin/python3 tools/ort_conformance.py SUITE_DIR ... [--list] [--rtol X] [--atol X]

Each SUITE_DIR is a folder of backend tests (every folder below it holding a model.onnx and
test_data_set_*), e.g. the node, pytorch-converted, pytorch-operator and simple folders of the
ONNX test data. Per suite this prints `N passed, M failed`, then how many of the failed tests
could not be read by this Python's onnx package ("unreadable": newer dtypes such as float8 or
int4) and how many cannot be run through onnxruntime-node at all ("not runnable": an input that
is a sequence, an optional or a tensor of a type onnxruntime-node cannot make, such as bfloat16).
Both count as failures. --list prints PASS/FAIL per test with the first reason.

Python reads the test data (onnx.numpy_helper) and writes each suite's inputs as raw files and
one manifest; one node process per suite (tools/bench/ort_conformance.js) runs every test with
ONNX Runtime on one thread at the default graph optimization level and writes the outputs; then
Python compares them as tools/common/testdir.cc does. onnxruntime-node comes from recur-bench's
folder (docs/benchmarking.md) and is installed there with npm when missing."""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from recur_bench import engines, workload  # noqa: E402  (found through HERE)

DRIVER = os.path.join(HERE, "bench", "ort_conformance.js")

# recur-run's default tolerance (tools/common/testdir.h).
RTOL = 1e-3
ATOL = 1e-5

# TensorProto element types onnxruntime-node can take and give, by their onnxruntime-node name.
ORT_TYPES = {
    onnx.TensorProto.FLOAT: "float32",
    onnx.TensorProto.DOUBLE: "float64",
    onnx.TensorProto.FLOAT16: "float16",
    onnx.TensorProto.INT8: "int8",
    onnx.TensorProto.INT16: "int16",
    onnx.TensorProto.INT32: "int32",
    onnx.TensorProto.INT64: "int64",
    onnx.TensorProto.UINT8: "uint8",
    onnx.TensorProto.UINT16: "uint16",
    onnx.TensorProto.UINT32: "uint32",
    onnx.TensorProto.UINT64: "uint64",
    onnx.TensorProto.BOOL: "bool",
    onnx.TensorProto.STRING: "string",
}
# How the raw output files of each onnxruntime-node type read back. float16 comes as its bits.
ORT_NUMPY = {"float32": np.float32, "float64": np.float64, "float16": np.float16,
             "int8": np.int8, "int16": np.int16, "int32": np.int32, "int64": np.int64,
             "uint8": np.uint8, "uint16": np.uint16, "uint32": np.uint32, "uint64": np.uint64,
             "bool": np.bool_}
FLOATING = {"float32", "float64", "float16", "bfloat16"}

# Outcome of one test, besides pass and fail: counted on their own lines (and as failures).
UNREADABLE = "unreadable"
NOT_RUNNABLE = "not runnable"


def type_name(elem_type):
    """The onnxruntime-node name of a TensorProto element type, or ONNX's own for the others."""
    if elem_type in ORT_TYPES:
        return ORT_TYPES[elem_type]
    # onnx 1.12 does not know the newest types' names; the number still says which one.
    return onnx.TensorProto.DataType.Name(elem_type).lower() \
        if elem_type in onnx.TensorProto.DataType.values() else "elem_type %d" % elem_type


def shape_str(shape):
    return "[" + ",".join(str(d) for d in shape) + "]"


def index_of(name):
    """Numeric suffix of test_data_set_12 or input_3.pb, for ordering (as testdir.cc does)."""
    digits = ""
    for c in name:
        if c.isdigit():
            digits += c
        elif digits and c == ".":
            break
    return int(digits) if digits else 0


class Value:
    """One value of a data set: a tensor (array, elem type), a sequence, or an optional."""

    def __init__(self, name, kind, array=None, elem=None, elements=None):
        self.name = name
        self.kind = kind  # "tensor", "sequence", "optional"
        self.array = array
        self.elem = elem
        self.elements = elements


def tensor_value(proto, declared_elem):
    arr = numpy_helper.to_array(proto)
    elem = proto.data_type
    # ONNX 1.12 wrote its bfloat16 data as uint16 tensors holding the bits; where the model
    # declares bfloat16, recur reads them as bfloat16 (testdir.cc), and so does this.
    if elem == onnx.TensorProto.UINT16 and declared_elem == onnx.TensorProto.BFLOAT16:
        elem = onnx.TensorProto.BFLOAT16
    return Value(proto.name, "tensor", array=arr, elem=elem)


def read_value(path, kind, declared_elem):
    """Reads a .pb as the declared kind says, as recur does: the file alone does not say."""
    with open(path, "rb") as f:
        data = f.read()
    if kind == "sequence":
        seq = onnx.SequenceProto()
        seq.ParseFromString(data)
        return Value(seq.name, "sequence",
                     elements=[tensor_value(t, None) for t in seq.tensor_values])
    if kind == "optional":
        opt = onnx.OptionalProto()
        opt.ParseFromString(data)
        return Value(opt.name, "optional", elements=[tensor_value(opt.tensor_value, None)]
                     if opt.HasField("tensor_value") else [])
    t = onnx.TensorProto()
    t.ParseFromString(data)
    return tensor_value(t, declared_elem)


def value_kind(value_info):
    t = value_info.type
    if t.HasField("optional_type"):
        return "optional", None
    if t.HasField("sequence_type"):
        return "sequence", None
    return "tensor", t.tensor_type.elem_type if t.HasField("tensor_type") else None


class Test:
    """One backend test folder, read: the model's inputs and outputs and its data sets."""

    def __init__(self, root, d):
        self.dir = d
        self.name = os.path.relpath(d, root)
        self.model = os.path.join(d, "model.onnx")
        self.outcome = None  # None while it may still pass
        self.reason = ""
        self.sets = []  # [(set dir, [(feed name, Value)], [Value])]
        self.non_tensor_output = False

    def fail(self, outcome, reason):
        if self.outcome is None:
            self.outcome, self.reason = outcome, reason

    def read(self):
        try:
            # Only the graph's interface is needed; external data need not be loaded.
            model = onnx.load(self.model, load_external_data=False)
        except Exception as e:  # noqa: BLE001  (any parse error makes the test unreadable)
            self.fail(UNREADABLE, "model.onnx: %s" % e)
            return
        g = model.graph
        inits = {i.name for i in g.initializer}
        self.inputs = {i.name: value_kind(i) for i in g.input}
        # Files are matched to inputs by position among the inputs without a default, unless
        # a file's own name is an input's name (testdir.cc's feeds_for).
        positional = [i.name for i in g.input if i.name not in inits]
        outputs = [value_kind(o) for o in g.output]
        self.non_tensor_output = any(k != "tensor" for k, _ in outputs)
        sets = sorted((e for e in os.listdir(self.dir) if e.startswith("test_data_set_")
                       and os.path.isdir(os.path.join(self.dir, e))), key=index_of)
        if not sets:
            self.fail("fail", "no test_data_set_* folder in '%s'" % self.dir)
            return
        for s in sets:
            sd = os.path.join(self.dir, s)
            files = os.listdir(sd)
            ins = sorted((f for f in files if f.startswith("input_") and f.endswith(".pb")),
                         key=index_of)
            outs = sorted((f for f in files if f.startswith("output_") and f.endswith(".pb")),
                          key=index_of)
            feeds, wants = [], []
            try:
                for k, f in enumerate(ins):
                    kind, elem = self.inputs[positional[k]] if k < len(positional) else \
                        ("tensor", None)
                    v = read_value(os.path.join(sd, f), kind, elem)
                    if v.name in self.inputs:
                        feed = v.name
                    elif k < len(positional):
                        feed = positional[k]
                    else:
                        self.fail("fail", "%s: input_%d.pb matches no model input" % (sd, k))
                        return
                    feeds.append((feed, v))
                for k, f in enumerate(outs):
                    kind, elem = outputs[k] if k < len(outputs) else ("tensor", None)
                    wants.append(read_value(os.path.join(sd, f), kind, elem))
            except Exception as e:  # noqa: BLE001  (onnx 1.12 cannot read the newest dtypes)
                self.fail(UNREADABLE, "%s/%s: %s: %s" % (s, f, type(e).__name__, e))
                return
            self.sets.append((sd, feeds, wants))
        # Whatever onnxruntime-node cannot take (it makes tensors of its own types only).
        for _, feeds, _ in self.sets:
            for feed, v in feeds:
                declared = self.inputs.get(feed, ("tensor", None))
                if v.kind != "tensor" or declared[0] != "tensor":
                    self.fail(NOT_RUNNABLE, "input '%s' is a%s %s" % (
                        feed, "n" if declared[0] == "optional" else "", declared[0]
                        if declared[0] != "tensor" else v.kind))
                    return
                elem = declared[1] if declared[1] else v.elem
                if elem not in ORT_TYPES or v.elem not in ORT_TYPES:
                    self.fail(NOT_RUNNABLE, "input '%s' is %s" % (
                        feed, type_name(elem if elem not in ORT_TYPES else v.elem)))
                    return


def write_inputs(test, work):
    """The manifest entry of a test, its inputs written as raw little-endian files."""
    entry = {"model": os.path.abspath(test.model), "result": os.path.join(work, "result.json"),
             "sets": []}
    for si, (_, feeds, _) in enumerate(test.sets):
        inputs = []
        for k, (name, v) in enumerate(feeds):
            ty = ORT_TYPES[v.elem]
            f = {"name": name, "type": ty, "shape": list(v.array.shape)}
            if ty == "string":
                # Strings travel in the manifest; bytes that are not UTF-8 survive as U+FFFD.
                f["strings"] = [s.decode("utf-8", "replace") if isinstance(s, bytes) else str(s)
                                for s in v.array.reshape(-1)]
            else:
                f["file"] = os.path.join(work, "s%d_in%d.bin" % (si, k))
                arr = np.ascontiguousarray(v.array)
                if ty == "bool":
                    arr = arr.astype(np.uint8)
                arr.astype(arr.dtype.newbyteorder("<"), copy=False).tofile(f["file"])
            inputs.append(f)
        entry["sets"].append({"inputs": inputs, "out_prefix": os.path.join(work, "s%d_out" % si)})
    return entry


def ort_node_path():
    """recur-bench's onnxruntime-node folder, installed with npm where it is missing."""
    ort_dir = workload.CACHE
    if engines._ort_node_installed(ort_dir) != engines.ORT_VERSION:
        if not shutil.which("npm"):
            sys.exit("ort_conformance: onnxruntime-node %s is not installed in %s and there is no "
                     "npm" % (engines.ORT_VERSION, ort_dir))
        print("installing onnxruntime-node@%s into %s" % (engines.ORT_VERSION, ort_dir),
              file=sys.stderr)
        err = engines._install_ort_node(ort_dir)
        if err:
            sys.exit("ort_conformance: " + err)
    return os.path.join(ort_dir, "node_modules")


def run_node(manifest_path, tests, node_path):
    """One node process runs the whole suite. If ONNX Runtime takes it down, the test it was on
    has no result: that test fails and a new process starts after it."""
    env = dict(os.environ, NODE_PATH=node_path)
    first = 0
    while first < len(tests):
        p = subprocess.run(["node", DRIVER, manifest_path, str(first)], env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        done = first
        while done < len(tests) and os.path.exists(tests[done][1]["result"]):
            done += 1
        if done < len(tests):
            if p.returncode == 0:
                sys.exit("ort_conformance: node ended without a result for %s" % tests[done][0].name)
            why = (p.stderr.strip().splitlines() or ["exit status %d" % p.returncode])[-1]
            tests[done][0].fail("fail", "the node process died (%s)" % why[:200])
            done += 1
        first = done


def got_array(out):
    """An output as onnxruntime-node gave it: (type name, array)."""
    ty, shape = out["type"], tuple(out["shape"])
    if ty == "string":
        return ty, np.array([s.encode("utf-8") for s in out["strings"]], dtype=object).reshape(
            shape)
    if ty not in ORT_NUMPY:
        return ty, None
    raw = np.fromfile(out["file"], dtype=np.uint8 if ty == "bool" else
                      np.dtype(ORT_NUMPY[ty]).newbyteorder("<"))
    return ty, raw.astype(ORT_NUMPY[ty]).reshape(shape)


def compare(got_ty, got, want, rtol, atol):
    """testdir.cc's compare for a tensor: None when it matches, else the first reason."""
    want_ty = type_name(want.elem)
    w = want.array
    if got_ty == "string" and want_ty == "string":
        if got.shape != w.shape:
            return "shape %s, expected %s" % (shape_str(got.shape), shape_str(w.shape))
        gw = got.reshape(-1)
        ww = [s if isinstance(s, bytes) else str(s).encode("utf-8") for s in w.reshape(-1)]
        bad = [i for i in range(len(ww)) if gw[i] != ww[i]]
        if bad:
            i = bad[0]
            return 'element %d is "%s", expected "%s"' % (
                i, gw[i].decode("utf-8", "replace"), ww[i].decode("utf-8", "replace"))
        return None
    if got_ty != want_ty:
        return "dtype %s, expected %s" % (got_ty, want_ty)
    if got is None:
        return "cannot compare dtype " + want_ty
    if got.shape != w.shape:
        return "shape %s, expected %s" % (shape_str(got.shape), shape_str(w.shape))
    # Every element as a double, as recur does (int64 beyond 2^53 included).
    g = got.reshape(-1).astype(np.float64)
    wv = w.reshape(-1).astype(np.float64)
    exact = want_ty not in FLOATING
    with np.errstate(all="ignore"):
        nan = np.isnan(g) | np.isnan(wv)
        inf = np.isinf(g) | np.isinf(wv)
        diff = np.abs(g - wv)
        good = diff == 0 if exact else diff <= atol + rtol * np.abs(wv)
        good = np.where(nan, np.isnan(g) & np.isnan(wv), np.where(inf, g == wv, good))
    bad = np.flatnonzero(~good)
    if bad.size == 0:
        return None
    i = int(bad[0])
    return "%d of %d elements differ; element %d is %.3g, expected %.3g" % (
        bad.size, wv.size, i, g[i], wv[i])


def compare_value(got_ty, got, want, rtol, atol):
    # onnxruntime-node gives tensors only; recur's rule for a tensor against a sequence or an
    # optional is a mismatch.
    if want.kind == "sequence":
        return "a tensor, expected a sequence"
    if want.kind == "optional":
        if not want.elements:
            return "a value, expected an empty optional"
        want = want.elements[0]
    return compare(got_ty, got, want, rtol, atol)


def check(test, entry, rtol, atol):
    """Compares a test's outputs with the expected ones, as testdir.cc's run_test_dir does."""
    try:
        with open(entry["result"]) as f:
            r = json.load(f)
    except (OSError, ValueError) as e:
        test.fail("fail", "no result from node: %s" % e)
        return
    if "load_error" in r:
        test.fail("fail", "load: " + r["load_error"])
        return
    for (sd, _, wants), res in zip(test.sets, r["sets"]):
        if "error" in res:
            test.fail("fail", "%s: run: %s" % (os.path.basename(sd), res["error"]))
            return
        outs = res["outputs"]
        for k, want in enumerate(wants):
            idx = k
            for j, o in enumerate(outs):
                if want.name and o["name"] == want.name:
                    idx = j
            if idx >= len(outs):
                test.fail("fail", "expected output %d ('%s') was not produced" % (k, want.name))
                continue
            got_ty, got = got_array(outs[idx])
            why = compare_value(got_ty, got, want, rtol, atol)
            if why:
                test.fail("fail", "output '%s': %s" % (outs[idx]["name"], why))
    if test.outcome is None:
        test.outcome = "pass"


def run_suite(root, node_path, rtol, atol, keep):
    dirs = []
    for d, _, files in os.walk(root):
        if "model.onnx" in files:
            dirs.append(d)
    tests = [Test(root, d) for d in sorted(dirs)]
    work = tempfile.mkdtemp(prefix="ort-conformance-")
    try:
        runnable = []
        for i, t in enumerate(tests):
            t.read()
            if t.outcome is None:
                tw = os.path.join(work, str(i))
                os.mkdir(tw)
                runnable.append((t, write_inputs(t, tw)))
        manifest = os.path.join(work, "manifest.json")
        with open(manifest, "w") as f:
            json.dump({"tests": [e for _, e in runnable]}, f)
        run_node(manifest, runnable, node_path)
        for t, e in runnable:
            check(t, e, rtol, atol)
    finally:
        if keep:
            print("work files kept in " + work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return tests


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("suites", nargs="+", metavar="SUITE_DIR")
    ap.add_argument("--list", action="store_true", help="PASS/FAIL per test, with the reason")
    ap.add_argument("--rtol", type=float, default=RTOL)
    ap.add_argument("--atol", type=float, default=ATOL)
    ap.add_argument("--keep", action="store_true", help="keep the raw files and the manifest")
    a = ap.parse_args()
    if not shutil.which("node"):
        sys.exit("ort_conformance: no node on PATH (onnxruntime-node needs Node.js)")
    node_path = ort_node_path()
    for root in a.suites:
        tests = run_suite(root, node_path, a.rtol, a.atol, a.keep)
        if a.list:
            for t in tests:
                print("%s %s%s" % ("PASS" if t.outcome == "pass" else "FAIL", t.name,
                                   "" if t.outcome == "pass" else "  (%s%s)" % (
                                       "" if t.outcome == "fail" else t.outcome + ": ",
                                       t.reason)))
        passed = sum(t.outcome == "pass" for t in tests)
        print("%s: onnxruntime-node %s, CPU: %d passed, %d failed" % (
            root, engines.ORT_VERSION, passed, len(tests) - passed))
        print("  unreadable by onnx %s (counted as failed): %d" % (
            onnx.__version__, sum(t.outcome == UNREADABLE for t in tests)))
        print("  not runnable through onnxruntime-node (counted as failed): %d" % sum(
            t.outcome == NOT_RUNNABLE for t in tests))
        # Not a class of its own: onnxruntime-node returns tensors only, so these fail.
        print("  failed with a sequence or optional output onnxruntime-node cannot return: %d" %
              sum(t.outcome == "fail" and t.non_tensor_output for t in tests))
        sys.stdout.flush()


if __name__ == "__main__":
    main()
