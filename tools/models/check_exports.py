"""A small float64 numpy interpreter for the operators in the exported models, used by
export_all.py to check each export: the ONNX graph that torch.onnx.export wrote must compute
PyTorch's eager outputs. A failure here is an exporter problem (such as a zero initial state
frozen at the traced batch size), not a recur one. It covers only what these models use, and
asserts on anything else.

    /usr/bin/python3 tools/models/check_exports.py models/<name> ...
"""

import glob
import os
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


ACTIVATIONS = {"Sigmoid": sigmoid, "Tanh": np.tanh, "Relu": lambda x: np.maximum(x, 0.0)}
DEFAULT_ACTIVATIONS = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"],
                       "RNN": ["Tanh"]}


def rnn(kind, a, X, W, R, B=None, lens=None, h0=None, c0=None):
    """ONNX LSTM/GRU/RNN, layout 0, no clip/peepholes: straight from the operator spec."""
    assert a.get("layout", 0) == 0 and "clip" not in a and not a.get("input_forget", 0)
    T, N, _ = X.shape
    D, G, _ = W.shape
    H = a["hidden_size"]
    acts = [s.decode() if isinstance(s, bytes) else s
            for s in a.get("activations", DEFAULT_ACTIVATIONS[kind] * D)]
    per = len(acts) // D
    Y = np.zeros((T, D, N, H))
    Yh = np.zeros((D, N, H))
    Yc = np.zeros((D, N, H))
    lens = np.full(N, T) if lens is None else lens
    for d in range(D):
        f = [ACTIVATIONS[s] for s in acts[d * per:(d + 1) * per]]
        bias = B[d] if B is not None else np.zeros(2 * G)
        wb, rb = bias[:G], bias[G:]
        for n in range(N):
            h = h0[d, n].copy() if h0 is not None else np.zeros(H)
            c = c0[d, n].copy() if c0 is not None else np.zeros(H)
            steps = range(int(lens[n]))
            for t in (steps if d == 0 else reversed(steps)):
                gx = W[d] @ X[t, n] + wb
                if kind == "LSTM":
                    i, o, fg, cc = np.split(gx + R[d] @ h + rb, 4)
                    c = f[0](fg) * c + f[0](i) * f[1](cc)
                    h = f[0](o) * f[2](c)
                elif kind == "GRU":
                    assert a.get("linear_before_reset", 0) == 1
                    xz, xr, xh = np.split(gx, 3)
                    hz, hr, hh = np.split(R[d] @ h + rb, 3)
                    z, r = f[0](xz + hz), f[0](xr + hr)
                    h = (1 - z) * f[1](xh + r * hh) + z * h
                else:
                    h = f[0](gx + R[d] @ h + rb)
                Y[t, d, n] = h
            if lens[n] > 0:
                Yh[d, n], Yc[d, n] = h, c
    return [Y, Yh, Yc]


def as_float64(a):
    return a.astype(np.float64) if a.dtype == np.float32 else a


def clamp(v):
    return int(max(min(int(v), 2**62), -2**62))


def run_node(op, a, I):
    if op == "Constant":
        return [as_float64(numpy_helper.to_array(a["value"]))]
    if op == "Gather":
        return [np.take(I[0], I[1], axis=a.get("axis", 0))]
    if op == "Shape":
        return [np.array(I[0].shape, np.int64)]
    if op == "Unsqueeze":
        axes = a["axes"] if "axes" in a else list(I[1])
        x = I[0]
        for ax in sorted(ax % (x.ndim + len(axes)) for ax in axes):
            x = np.expand_dims(x, ax)
        return [x]
    if op == "Squeeze":
        return [np.squeeze(I[0], tuple(a["axes"] if "axes" in a else I[1]))]
    if op == "Concat":
        return [np.concatenate(I, axis=a["axis"])]
    if op == "ConstantOfShape":
        v = as_float64(numpy_helper.to_array(a["value"]))
        return [np.full(tuple(I[0]), v[0], dtype=v.dtype)]
    if op == "Slice":
        x, starts, ends = I[0], I[1], I[2]
        axes = I[3] if len(I) > 3 and I[3] is not None else range(len(starts))
        steps = I[4] if len(I) > 4 and I[4] is not None else [1] * len(starts)
        sl = [slice(None)] * x.ndim
        for s, e, ax, st in zip(starts, ends, axes, steps):
            sl[ax] = slice(clamp(s), clamp(e), int(st))
        return [x[tuple(sl)]]
    if op == "Transpose":
        return [np.transpose(I[0], a.get("perm"))]
    if op in ("LSTM", "GRU", "RNN"):
        return rnn(op, a, *I)
    if op == "MatMul":
        return [I[0] @ I[1]]
    if op == "Add":
        return [I[0] + I[1]]
    if op == "Mul":
        return [I[0] * I[1]]
    if op == "Softmax":  # opset 13: along one axis
        x, ax = I[0], a.get("axis", -1)
        e = np.exp(x - x.max(axis=ax, keepdims=True))
        return [e / e.sum(axis=ax, keepdims=True)]
    if op == "ReduceSum":  # opset 13: axes as an input; without it, every axis
        assert not a.get("noop_with_empty_axes", 0)
        axes = tuple(I[1]) if len(I) > 1 and I[1] is not None else None
        return [I[0].sum(axis=axes, keepdims=bool(a.get("keepdims", 1)))]
    if op == "LogSoftmax":
        x, ax = I[0], a.get("axis", -1)
        m = x.max(axis=ax, keepdims=True)
        return [x - m - np.log(np.exp(x - m).sum(axis=ax, keepdims=True))]
    if op == "Expand":
        return [I[0] * np.ones(tuple(I[1]), dtype=I[0].dtype)]
    if op == "Reshape":
        assert not a.get("allowzero", 0)
        return [I[0].reshape([I[0].shape[i] if s == 0 else s for i, s in enumerate(I[1])])]
    if op == "ReduceMean":
        return [I[0].mean(axis=tuple(a["axes"]), keepdims=bool(a.get("keepdims", 1)))]
    if op == "ReduceProd":
        assert "axes" not in a and len(I) == 1
        return [np.prod(I[0], keepdims=bool(a.get("keepdims", 1)))]
    if op == "Gemm":
        A = I[0].T if a.get("transA") else I[0]
        Bm = I[1].T if a.get("transB") else I[1]
        return [a.get("alpha", 1.0) * A @ Bm + a.get("beta", 1.0) * I[2]]
    if op == "Conv":  # 1-D, group 1
        assert a.get("group", 1) == 1
        x, w = I[0], I[1]
        b = I[2] if len(I) > 2 else np.zeros(w.shape[0])
        p, s = a.get("pads", [0, 0]), a.get("strides", [1])[0]
        dil = a.get("dilations", [1])[0]
        xp = np.pad(x, ((0, 0), (0, 0), (p[0], p[1])))
        span = (w.shape[2] - 1) * dil + 1
        y = np.stack([np.einsum("nck,ock->no", xp[:, :, t:t + span:dil], w)
                      for t in range(0, xp.shape[2] - span + 1, s)], axis=2)
        return [y + b[None, :, None]]
    if op == "ConvTranspose":  # 1-D, group 1, dilation 1: scatter each input step, then crop
        assert a.get("group", 1) == 1 and a.get("dilations", [1]) == [1]
        assert "output_shape" not in a and a.get("auto_pad", "NOTSET") in ("NOTSET", b"NOTSET")
        x, w = I[0], I[1]
        b = I[2] if len(I) > 2 else np.zeros(w.shape[1])
        p, s = a.get("pads", [0, 0]), a.get("strides", [1])[0]
        op_pad = a.get("output_padding", [0])[0]
        k, t_in = w.shape[2], x.shape[2]
        full = np.zeros((x.shape[0], w.shape[1], s * (t_in - 1) + k + op_pad))
        for t in range(t_in):
            full[:, :, t * s:t * s + k] += np.einsum("nc,cok->nok", x[:, :, t], w)
        return [full[:, :, p[0]:full.shape[2] - p[1]] + b[None, :, None]]
    if op == "LeakyRelu":
        return [np.where(I[0] >= 0, I[0], a.get("alpha", 0.01) * I[0])]
    if op == "Identity":
        return [I[0]]
    if op == "Equal":
        return [I[0] == I[1]]
    if op == "Sub":
        return [I[0] - I[1]]
    if op == "Div":
        return [I[0] / I[1]]
    if op == "Pow":
        return [np.power(I[0], I[1])]
    if op == "Sqrt":
        return [np.sqrt(I[0])]
    if op == "Pad":  # opset 11+: pads (and the constant) as inputs, no axes
        assert len(I) < 4 or I[3] is None
        mode = a.get("mode", b"constant")
        mode = mode.decode() if isinstance(mode, bytes) else mode
        n = I[0].ndim
        width = [(int(I[1][i]), int(I[1][i + n])) for i in range(n)]
        assert all(lo >= 0 and hi >= 0 for lo, hi in width)
        if mode == "constant":
            value = I[2].item() if len(I) > 2 and I[2] is not None and I[2].size else 0
            return [np.pad(I[0], width, constant_values=value)]
        assert mode in ("reflect", "edge")
        return [np.pad(I[0], width, mode=mode)]
    if op == "BatchNormalization":
        x, s, b, m, v = I
        e = a.get("epsilon", 1e-5)
        r = (1, -1, 1)
        return [(x - m.reshape(r)) / np.sqrt(v.reshape(r) + e) * s.reshape(r) + b.reshape(r)]
    if op == "Relu":
        return [np.maximum(I[0], 0.0)]
    if op == "MaxPool":  # 1-D, no padding, floor
        assert not a.get("ceil_mode", 0) and not any(a.get("pads", [0]))
        k, s, x = a["kernel_shape"][0], a["strides"][0], I[0]
        return [np.stack([x[:, :, t * s:t * s + k].max(axis=2)
                          for t in range((x.shape[2] - k) // s + 1)], axis=2)]
    if op == "Tanh":
        return [np.tanh(I[0])]
    if op == "Sigmoid":
        return [sigmoid(I[0])]
    if op == "Cast":
        return [as_float64(I[0].astype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[a["to"]]))]
    if op == "TopK":  # 1-D, largest first, ties to the lower index (opset 11+)
        assert I[0].ndim == 1 and a.get("largest", 1) == 1 and a.get("sorted", 1) == 1
        idx = np.argsort(-I[0], kind="stable")[:int(I[1][0])]
        return [I[0][idx], idx.astype(np.int64)]
    if op == "Range":
        return [np.arange(I[0], I[1], I[2])]
    if op == "ScatterElements":  # 1-D
        assert I[0].ndim == 1
        d = I[0].copy()
        d[I[1]] = I[2]
        return [d]
    if op in ("And", "Or", "Less", "Greater"):
        f = {"And": np.logical_and, "Or": np.logical_or, "Less": np.less, "Greater": np.greater}
        return [f[op](I[0], I[1])]
    if op == "Not":
        return [np.logical_not(I[0])]
    if op == "Where":
        return [np.where(I[0], I[1], I[2])]
    if op in ("ArgMax", "ReduceMax"):  # ArgMax: the first of equal values, as ONNX's default
        assert not a.get("select_last_index", 0)
        axis = a.get("axis", 0) if op == "ArgMax" else tuple(a["axes"])
        keep = bool(a.get("keepdims", 1))
        if op == "ArgMax":
            return [np.argmax(I[0], axis=axis, keepdims=keep).astype(np.int64)]
        return [np.max(I[0], axis=axis, keepdims=keep)]
    # Sequences are Python lists.
    if op == "SequenceEmpty":
        return [[]]
    if op == "SequenceInsert":  # at the end
        assert len(I) == 2
        return [I[0] + [I[1]]]
    if op == "ConcatFromSequence":
        if a.get("new_axis", 0):
            return [np.stack(I[0], axis=a["axis"])]
        return [np.concatenate(I[0], axis=a["axis"])]
    raise NotImplementedError(op)


def run_loop(n, a, ins, env, functions, outer):
    """ONNX Loop: M and cond may be absent; the body's cond output ends it either way."""
    body = a["body"]
    trip = None if ins[0] is None else int(ins[0])
    cond = True if ins[1] is None else bool(ins[1])
    carried = ins[2:]
    scans = [[] for _ in range(len(body.output) - 1 - len(carried))]
    it = 0
    while cond and (trip is None or it < trip):
        feeds = [np.array(it, np.int64), np.array(cond)] + carried
        got = run_graph(body, {**env, **{i.name: v for i, v in zip(body.input, feeds)}},
                        functions, outer)
        outs = [got[o.name] for o in body.output]
        cond, carried = bool(outs[0]), outs[1:1 + len(carried)]
        for k, v in enumerate(outs[1 + len(carried):]):
            scans[k].append(v)
        it += 1
    return carried + [np.stack(s) for s in scans]


def attributes(node, outer):
    """The node's attribute values; one that refers to an attribute of the function being run
    (ref_attr_name) takes the call's value and is left out when the call has none."""
    a = {}
    for x in node.attribute:
        if x.ref_attr_name:
            if x.ref_attr_name in outer:
                a[x.name] = outer[x.ref_attr_name]
        else:
            a[x.name] = helper.get_attribute_value(x)
    return a


def run_graph(graph, env, functions, outer=None):
    """Runs `graph` on a copy of `env`; a subgraph sees the names of the graphs around it.
    A node that names one of `functions` (the model's FunctionProtos, by domain and name) runs
    the function's body in an environment of its own, with `outer` its call's attributes."""
    env = dict(env)
    env.update({i.name: as_float64(numpy_helper.to_array(i)) for i in graph.initializer})
    for n in graph.node:
        a = attributes(n, outer or {})
        ins = [env[i] if i else None for i in n.input]
        fn = functions.get((n.domain, n.op_type))
        if fn is not None:
            body = helper.make_graph(fn.node, fn.name, [], [helper.make_empty_tensor_value_info(o)
                                                           for o in fn.output])
            got = run_graph(body, {f: v for f, v in zip(fn.input, ins) if v is not None},
                            functions, a)
            outs = [got[o] for o in fn.output]
        elif n.op_type == "If":
            branch = a["then_branch"] if bool(env[n.input[0]]) else a["else_branch"]
            got = run_graph(branch, env, functions, outer)
            outs = [got[o.name] for o in branch.output]
        elif n.op_type == "Loop":
            outs = run_loop(n, a, ins, env, functions, outer)
        else:
            outs = run_node(n.op_type, a, ins)
        for name, v in zip(n.output, outs):
            if name:
                env[name] = v
    return {o.name: env[o.name] for o in graph.output}


def run(model, feeds):
    return run_graph(model.graph, feeds, {(f.domain, f.name): f for f in model.functions})


def check_dir(d, rtol=1e-4, atol=1e-6):
    """Runs every data set of model folder `d`; returns (ok, report lines). Tighter than
    recur's default tolerance: this is float64 against float64 rounded to float32."""
    model = onnx.load(os.path.join(d, "model.onnx"))
    name = os.path.basename(os.path.normpath(d))

    def index(path):
        return int(path.rsplit("_", 1)[1].split(".")[0])

    ok, lines = True, []
    for ds in sorted(glob.glob(os.path.join(d, "test_data_set_*")), key=index):
        def load(pattern):
            files = sorted(glob.glob(os.path.join(ds, pattern)), key=index)
            return [onnx.load_tensor(f) for f in files]

        got = run(model, {t.name: as_float64(numpy_helper.to_array(t))
                          for t in load("input_*.pb")})
        for t in load("output_*.pb"):
            want, g = numpy_helper.to_array(t), got[t.name]
            same_shape = g.shape == want.shape
            good = same_shape and bool(np.all(np.abs(g - want) <= atol + rtol * np.abs(want)))
            err = np.max(np.abs(g - want)) if same_shape else float("inf")
            ok = ok and good
            lines.append("%s %s %s: max abs error %.2e %s" % (
                name, os.path.basename(ds), t.name, err, "ok" if good else "MISMATCH"))
    return ok, lines


if __name__ == "__main__":
    all_ok = True
    for d in sys.argv[1:]:
        ok, lines = check_dir(d)
        print("\n".join(lines))
        all_ok = all_ok and ok
    sys.exit(0 if all_ok else 1)
