"""What to run: the cases (suite, models/ folders, user models), their inputs, sweep points, and
the feeds written for each engine (.npy for recur-run and PyTorch, raw .bin + feeds.json for the
ONNX Runtime drivers)."""
import glob
import itertools
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "recur-bench")

# docs/benchmarking.md's standard suite, written by tools/bench/gen_suite.py.
SUITE_CASES = ["lstm_stream", "lstm_med", "lstm_large", "gru_lbr1", "gru_lbr0", "bilstm",
               "lstm_peep", "rnn_tanh"]

BATCH_NAMES = {"batch", "batch_size", "batchsize", "bs", "n", "b", "num_batches"}
SEQ_NAMES = {"seq", "seq_len", "seqlen", "sequence", "sequence_length", "time", "t", "steps",
             "chunk", "length", "len", "timesteps", "time_steps"}

# Operators a token index passes through unchanged on its way to an embedding Gather.
_PASSTHROUGH = {"Cast", "Identity", "Reshape", "Squeeze", "Unsqueeze", "Transpose", "Flatten"}


class BenchError(Exception):
    """A problem with the user's input, reported as a message (exit status 2), never a trace."""


class Work:
    """One model at one input configuration."""

    def __init__(self, name, model, data_dir=None, point=None, kind="model"):
        self.name = name            # "lstm_med", "models/char_lstm_lm", "my_model"
        self.model = model          # path of model.onnx
        self.data_dir = data_dir    # test_data_set_0 or None
        self.point = dict(point or {})  # {"batch": 4, "seq": 100} for a sweep point
        self.kind = kind            # "suite", "model"
        self.feeds_dir = None       # written by write_feeds
        self.inputs = []            # [(name, dtype, shape)] actually fed
        self.plan = None            # recur-run --plan-only --json with every provider
        self.notes = []
        self.sym_values = {}        # symbolic dimension -> the size fed
        self.dims = {}              # "batch"/"seq" -> the size fed, where the symbols say

    @property
    def label(self):
        if not self.point:
            return self.name
        return self.name + " " + " ".join("%s=%s" % kv for kv in self.point.items())

    def key(self):
        return (self.name, tuple(sorted(self.point.items())))


# --- recur-run's view of a model ------------------------------------------------------------

def recur_env(ld_path=None):
    env = dict(os.environ)
    extra = ld_path or os.environ.get("RECUR_LD_LIBRARY_PATH", "")
    if extra:
        env["LD_LIBRARY_PATH"] = extra + (":" + env["LD_LIBRARY_PATH"]
                                          if env.get("LD_LIBRARY_PATH") else "")
    return env


def recur_plan(recur_run, model, providers=None, env=None):
    """(plan, None) from `recur-run MODEL --plan-only --json`, or (None, error message)."""
    cmd = [recur_run, model, "--plan-only", "--json"]
    if providers:
        cmd += ["--providers", ",".join(providers)]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    except (OSError, subprocess.SubprocessError) as e:
        return None, "cannot run %s: %s" % (recur_run, e)
    if p.returncode != 0:
        msg = (p.stderr or p.stdout).strip()
        msg = msg.replace("recur-run: error: ", "")
        return None, msg
    lines = [l for l in p.stdout.splitlines() if l.startswith("{")]
    if not lines:
        return None, "recur-run printed no plan: " + p.stdout.strip()[-300:]
    return json.loads(lines[-1]), None


def node_counts(plan):
    """Nodes per provider, those inside If/Loop/Scan bodies included: a model whose whole
    network sits in an If (models/vad_streaming) would otherwise look as if oneDNN took none."""
    counts = {}

    def add(nodes):
        for a in nodes:
            counts[a["provider"]] = counts.get(a["provider"], 0) + 1
            for g in a.get("subgraphs", []):
                add(g["nodes"])

    add(plan["assignment"])
    return counts


def fed_inputs(plan):
    """The inputs a caller must feed (those without an initializer behind them)."""
    return [i for i in plan["inputs"] if not i.get("optional")]


# --- Cases ----------------------------------------------------------------------------------

def ensure_suite(suite_dir, python=None):
    if all(os.path.exists(os.path.join(suite_dir, c, "model.onnx")) and
           os.path.exists(os.path.join(suite_dir, c, "test_data_set_0", "input_0.pb"))
           for c in SUITE_CASES):
        return
    gen = os.path.join(ROOT, "tools", "bench", "gen_suite.py")
    p = subprocess.run([python or sys.executable, gen, suite_dir], capture_output=True, text=True)
    if p.returncode != 0:
        raise BenchError("cannot generate the standard suite with %s: %s" %
                         (gen, (p.stderr or p.stdout).strip()[-500:]))


def suite_work(name, suite_dir, python=None):
    if name == "standard":
        ensure_suite(suite_dir, python)
        return [Work(c, os.path.join(suite_dir, c, "model.onnx"),
                     os.path.join(suite_dir, c, "test_data_set_0"), kind="suite")
                for c in SUITE_CASES]
    if name == "models":
        out = []
        for d in sorted(glob.glob(os.path.join(ROOT, "models", "*", "model.onnx"))):
            folder = os.path.dirname(d)
            ds = os.path.join(folder, "test_data_set_0")
            out.append(Work("models/" + os.path.basename(folder), d,
                            ds if os.path.isdir(ds) else None))
        return out
    raise BenchError("unknown suite '%s' (standard, models, all)" % name)


def model_work(arg):
    """A MODEL.onnx file or a folder holding model.onnx (and maybe test_data_set_0)."""
    path = os.path.abspath(arg)
    if os.path.isdir(path):
        folder, model = path, os.path.join(path, "model.onnx")
    else:
        folder, model = os.path.dirname(path), path
    if not os.path.isfile(model):
        raise BenchError("no model at %s" % model)
    ds = os.path.join(folder, "test_data_set_0")
    rel = os.path.relpath(folder if os.path.basename(model) == "model.onnx" else model, ROOT)
    name = rel if not rel.startswith("..") else os.path.basename(folder if os.path.basename(
        model) == "model.onnx" else model)
    if name.endswith(".onnx"):
        name = name[:-5]
    return Work(name, model, ds if os.path.isdir(ds) else None)


# --- Inputs ---------------------------------------------------------------------------------

def read_data_set(data_dir, names):
    """{name: array} from test_data_set_K/input_K.pb (TensorProtos named after the inputs, or
    in the inputs' order)."""
    from onnx import TensorProto, numpy_helper
    files = sorted(glob.glob(os.path.join(data_dir, "input_*.pb")),
                   key=lambda f: int(re.sub(r"\D", "", os.path.basename(f)) or 0))
    out = {}
    for k, f in enumerate(files):
        t = TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        name = t.name or (names[k] if k < len(names) else "input_%d" % k)
        out[name] = numpy_helper.to_array(t)
    return out


def token_bound(model_path, input_name):
    """The row count of the embedding table that an integer input indexes (Gather on an
    initializer, maybe through Cast/Reshape/...), or None."""
    try:
        import onnx
        m = onnx.load(model_path, load_external_data=False)
    except Exception:  # noqa: BLE001 - any unreadable model simply has no known bound
        return None
    inits = {i.name: list(i.dims) for i in m.graph.initializer}
    names = {input_name}
    bound = None
    for node in m.graph.node:  # nodes are in topological order in a valid model
        if node.op_type in _PASSTHROUGH and node.input and node.input[0] in names:
            names.update(node.output)
        elif (node.op_type == "Gather" and len(node.input) >= 2 and node.input[1] in names and
              node.input[0] in inits):
            axis = 0
            for a in node.attribute:
                if a.name == "axis":
                    axis = a.i
            dims = inits[node.input[0]]
            if dims and -len(dims) <= axis < len(dims):
                b = int(dims[axis])
                bound = b if bound is None else min(bound, b)
    return bound


def is_lengths_input(info):
    return info["dtype"].startswith(("int", "uint")) and re.search(r"len", info["name"], re.I)


def classify(symbol):
    s = symbol.lower()
    if s in BATCH_NAMES or "batch" in s:
        return "batch"
    if s in SEQ_NAMES or "seq" in s or "time" in s or s.endswith("len") or "chunk" in s:
        return "seq"
    return None


def parse_sweep(items):
    """['batch=1,4', 'seq=10'] -> [('batch', [1, 4]), ('seq', [10])]; BenchError on bad text."""
    out = []
    for item in items:
        key, eq, vals = item.partition("=")
        if not eq or not key or not vals:
            raise BenchError("--sweep takes KEY=V1,V2,... (e.g. batch=1,4,16), got '%s'" % item)
        values = []
        for v in vals.split(","):
            v = v.strip()
            if not v:
                continue
            try:
                values.append(int(v))
            except ValueError:
                raise BenchError("--sweep %s: '%s' is not a whole number" % (key, v)) from None
        if any(k == key for k, _ in out):
            raise BenchError("--sweep names %s twice" % key)
        out.append((key, values))
    return out


def resolve_sweep(inputs, sweep):
    """Maps each sweep key onto the model's symbolic dimensions.

    inputs: the plan's fed inputs; sweep: parse_sweep's list. Returns (axes, skipped): axes is
    [(key, symbols, values)] with the values the model can take, skipped a list of messages.
    """
    symbols = []
    for i in inputs:
        for d in i["shape"] or []:
            if isinstance(d, str) and d not in symbols:
                symbols.append(d)
    shapes = ", ".join("%s %s[%s]" % (i["name"], i["dtype"], ",".join(
        "?" if d is None else str(d) for d in (i["shape"] or []))) for i in inputs)
    axes, skipped = [], []
    for key, values in sweep:
        if key in symbols:
            match = [key]
        elif key in ("batch", "seq"):
            match = [s for s in symbols if classify(s) == key]
        else:
            match = []
        if not match:
            skipped.append("%s=%s skipped: the model has no symbolic '%s' dimension to vary "
                           "(inputs: %s)" % (key, ",".join(map(str, values)), key, shapes))
            continue
        good = []
        for v in values:
            if v < 1:
                skipped.append("%s=%d skipped: a dimension must be at least 1" % (key, v))
            elif v in good:
                continue
            else:
                good.append(v)
        if good:
            axes.append((key, match, good))
    return axes, skipped


def sweep_points(axes):
    """Every combination, as [{key: value}] in a stable order."""
    if not axes:
        return []
    keys = [k for k, _, _ in axes]
    return [dict(zip(keys, combo)) for combo in itertools.product(*[v for _, _, v in axes])]


def _dtype(name):
    if name == "bfloat16":
        raise BenchError("bfloat16 inputs are not supported by recur-bench's feeds")
    return np.dtype(name)


def make_arrays(work, inputs, base, axes=None, int_ranges=None, seed=0):
    """The arrays fed at work.point: the data set's own arrays when no dimension changes,
    otherwise random ones (normal floats; integer ids within the embedding's rows, lengths
    within the sequence, or the user's --int-range)."""
    rng = np.random.default_rng(seed)
    sym_value = {}
    for key, symbols, _ in axes or []:
        if key in work.point:
            for s in symbols:
                sym_value[s] = work.point[key]
    # Symbols not swept: the data set's size, else 1.
    for i in inputs:
        a = base.get(i["name"])
        for k, d in enumerate(i["shape"] or []):
            if isinstance(d, str) and d not in sym_value and a is not None and k < a.ndim:
                sym_value[d] = int(a.shape[k])
    seq_value = None
    for s, v in sym_value.items():
        if classify(s) == "seq":
            seq_value = v if seq_value is None else max(seq_value, v)
    work.sym_values = dict(sym_value)
    work.dims = {}
    for s, v in sym_value.items():
        c = classify(s)
        if c and c not in work.dims:
            work.dims[c] = v
    arrays = []
    for i in inputs:
        name, dt = i["name"], _dtype(i["dtype"])
        a = base.get(name)
        if i["shape"] is None:
            if a is None:
                raise BenchError("input '%s' has an unknown rank and no data set gives it" % name)
            shape = a.shape
        else:
            shape = []
            for k, d in enumerate(i["shape"]):
                if isinstance(d, int):
                    shape.append(d)
                elif isinstance(d, str):
                    shape.append(sym_value.get(d, 1))
                else:
                    shape.append(int(a.shape[k]) if a is not None and k < a.ndim else 1)
            shape = tuple(shape)
        if a is not None and tuple(a.shape) == tuple(shape) and not work.point:
            arrays.append((name, a.astype(dt, copy=False)))
            continue
        if dt.kind == "f":
            arr = rng.standard_normal(shape).astype(dt)
        elif dt.kind == "b":
            arr = rng.integers(0, 2, size=shape).astype(dt)
        elif dt.kind in "iu":
            lo, hi, why = 0, 3, "recur-run's default range"
            if int_ranges and name in int_ranges:
                lo, hi = int_ranges[name]
                why = "--int-range"
            elif is_lengths_input(i) and seq_value:
                lo, hi, why = 1, seq_value, "sequence lengths up to the sequence length"
            else:
                bound = token_bound(work.model, name)
                if bound:
                    lo, hi, why = 0, bound - 1, "ids of an embedding with %d rows" % bound
                elif a is not None and a.size:
                    lo, hi, why = int(a.min()), int(a.max()), "the data set's range"
            arr = rng.integers(lo, hi + 1, size=shape).astype(dt)
            if is_lengths_input(i) and arr.size and why.startswith("sequence"):
                arr.flat[0] = hi  # the longest sequence sets the padded length
            work.notes.append("%s: integers in [%d, %d] (%s)" % (name, lo, hi, why))
        else:
            raise BenchError("cannot make random %s data for input '%s'" % (dt, name))
        arrays.append((name, arr))
    return arrays


_ORT_TYPES = {"float32", "float64", "int32", "int64"}


def write_feeds(out_dir, arrays):
    """input_K.npy for recur-run/PyTorch, and input_K.bin + feeds.json for the ONNX Runtime
    drivers (the format of tools/bench/ort_perf.js)."""
    os.makedirs(out_dir, exist_ok=True)
    feeds = []
    for k, (name, a) in enumerate(arrays):
        # Not np.ascontiguousarray: it makes a scalar input (vad_streaming's sr) shape [1].
        a = np.asarray(a, order="C")
        np.save(os.path.join(out_dir, "input_%d.npy" % k), a)
        entry = {"name": name, "type": str(a.dtype), "shape": list(a.shape),
                 "npy": "input_%d.npy" % k}
        if str(a.dtype) in _ORT_TYPES:
            f = "input_%d.bin" % k
            a.astype(a.dtype.newbyteorder("<")).tofile(os.path.join(out_dir, f))
            entry["file"] = f
        feeds.append(entry)
    with open(os.path.join(out_dir, "feeds.json"), "w") as fh:
        json.dump(feeds, fh)
    return feeds
