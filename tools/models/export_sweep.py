"""A sweep of PyTorch exports around recurrent layers, for a three-way check of recur, ONNX
Runtime and PyTorch on the shapes of graph that torch.onnx.export writes: each variant is a
backend-test folder (model.onnx, test_data_set_0) whose expected outputs are PyTorch's own,
run eagerly in float64 (common.run_eager).

    /usr/bin/python3 tools/models/export_sweep.py /tmp/sweep [--only NAME,...]
    build/tools/recur-run --suite /tmp/sweep
    /usr/bin/python3 tools/ort_conformance.py /tmp/sweep --list

The variants cover the exporter's choices that change the graph around an RNN node: opsets 7
to 17 (7 and 8 write zero initial states as the experimental ConstantFill), batch_first, stacked and bidirectional layers, initial states as inputs, zero states
built from Shape, packed sequences, cells unrolled by tracing, scripted loops (Loop), the
weights listed as graph inputs (keep_initializers_as_inputs), no constant folding, and glue
such as Conv1d, Embedding, attention and LayerNorm. Each data set uses a batch and a length
other than the traced ones, so frozen shapes show up. Nothing here is in CTest: the sweep
needs torch and takes about a minute; models/ holds the exports that are, and
tests/data/legacy_exports the opset 7 and 8 variants (--only lstm_op7,lstm_op8,...).
"""

import argparse
import os
import sys

import numpy as np
import onnx
import torch
from torch import nn
from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence

import common


class Rnn(nn.Module):
    """One torch RNN layer stack, returning every output it has."""

    def __init__(self, kind, states_in=False, **kw):
        super().__init__()
        self.kind = kind
        self.rnn = getattr(nn, kind)(**kw)
        self.states_in = states_in

    def forward(self, x, *states):
        if self.states_in:
            st = (states[0], states[1]) if self.kind == "LSTM" else states[0]
            y, s = self.rnn(x, st)
        else:
            y, s = self.rnn(x)
        return (y,) + (tuple(s) if self.kind == "LSTM" else (s,))


class Packed(nn.Module):
    def __init__(self, kind, **kw):
        super().__init__()
        self.kind = kind
        self.rnn = getattr(nn, kind)(batch_first=True, **kw)

    def forward(self, x, lengths):
        p = pack_padded_sequence(x, lengths, batch_first=True, enforce_sorted=False)
        y, s = self.rnn(p)
        y, _ = pad_packed_sequence(y, batch_first=True, total_length=x.shape[1])
        h = s[0] if self.kind == "LSTM" else s
        return y, h


class CellLoop(nn.Module):
    """An LSTMCell or GRUCell stepped in Python: tracing unrolls it over the traced length."""

    def __init__(self, kind, inp, hid):
        super().__init__()
        self.kind = kind
        self.cell = getattr(nn, kind)(inp, hid)
        self.hid = hid

    def forward(self, x):
        h = x.new_zeros(x.shape[1], self.hid)
        c = x.new_zeros(x.shape[1], self.hid)
        ys = []
        for t in range(x.shape[0]):
            if self.kind == "LSTMCell":
                h, c = self.cell(x[t], (h, c))
            else:
                h = self.cell(x[t], h)
            ys.append(h)
        return torch.stack(ys)


class ScriptedGruLoop(nn.Module):
    """A GRU cell written out (scripting cannot export aten::gru_cell) over a length known only
    at run time: scripting exports a Loop whose body carries h, stacked after the loop."""

    def __init__(self):
        super().__init__()
        self.wi = nn.Linear(5, 18)
        self.wh = nn.Linear(6, 18)

    def forward(self, x):
        h = x.new_zeros((x.shape[1], 6))
        ys = []
        for t in range(x.shape[0]):
            gi = self.wi(x[t])
            gh = self.wh(h)
            r = torch.sigmoid(gi[:, :6] + gh[:, :6])
            z = torch.sigmoid(gi[:, 6:12] + gh[:, 6:12])
            n = torch.tanh(gi[:, 12:] + r * gh[:, 12:])
            h = (1.0 - z) * n + z * h
            ys.append(h)
        return torch.stack(ys)


class ConvGru(nn.Module):
    """Speech-style: Conv1d over features, GRU over time, a per-frame classifier."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv1d(8, 12, 3, padding=1)
        self.norm = nn.BatchNorm1d(12)
        self.gru = nn.GRU(12, 10, num_layers=2, bidirectional=True, batch_first=True)
        self.out = nn.Linear(20, 5)

    def forward(self, feats):  # [N, 8, T]
        z = torch.relu(self.norm(self.conv(feats))).transpose(1, 2)
        y, _ = self.gru(z)
        return torch.log_softmax(self.out(y), dim=-1)


class EmbedLstmAttention(nn.Module):
    def __init__(self):
        super().__init__()
        self.emb = nn.Embedding(40, 12)
        self.lstm = nn.LSTM(12, 16, batch_first=True, bidirectional=True)
        self.norm = nn.LayerNorm(32)
        self.attn = nn.MultiheadAttention(32, 4, batch_first=True)
        self.head = nn.Linear(32, 3)

    def forward(self, tokens):
        y, _ = self.lstm(self.emb(tokens))
        y = self.norm(y)
        # A query that is not the key keeps eval mode off the fused kernel, which torch 1.13
        # cannot export.
        a, _ = self.attn(y * 1.0, y, y, need_weights=False)
        return self.head(a.mean(dim=1))


class LstmProjHead(nn.Module):
    """LSTM, dropout (off in eval), a GELU MLP on the last step, from h_n sliced in the graph."""

    def __init__(self):
        super().__init__()
        self.lstm = nn.LSTM(6, 9, num_layers=3, dropout=0.3)
        self.mlp = nn.Sequential(nn.Linear(9, 14), nn.GELU(), nn.Linear(14, 2))

    def forward(self, x):
        _, (h, _) = self.lstm(x)
        return self.mlp(h[-1])


def rnn_variant(kind, opset, batch_first=False, layers=1, bidir=False, states_in=False,
                nonlinearity=None, keep_inits=False, fold=True):
    kw = dict(input_size=5, hidden_size=7, num_layers=layers, bidirectional=bidir,
              batch_first=batch_first)
    if nonlinearity:
        kw["nonlinearity"] = nonlinearity
    model = Rnn(kind, states_in, **kw)
    D = (2 if bidir else 1) * layers

    def data(rng, T, N):
        x = rng.standard_normal((N, T, 5) if batch_first else (T, N, 5)).astype(np.float32)
        ins = [x]
        if states_in:
            ins.append(rng.standard_normal((D, N, 7)).astype(np.float32))
            if kind == "LSTM":
                ins.append(rng.standard_normal((D, N, 7)).astype(np.float32))
        return ins

    in_names = ["x"] + (["h0", "c0"][: 2 if kind == "LSTM" else 1] if states_in else [])
    out_names = ["y", "h_n"] + (["c_n"] if kind == "LSTM" else [])
    seq_axis, batch_axis = (1, 0) if batch_first else (0, 1)
    dyn = {"x": {seq_axis: "seq", batch_axis: "batch"},
           "y": {seq_axis: "seq", batch_axis: "batch"}}
    for n in in_names[1:] + out_names[1:]:
        dyn[n] = {1: "batch"}
    return dict(model=model, data=data, inputs=in_names, outputs=out_names, opset=opset,
                dynamic_axes=dyn, keep_inits=keep_inits, fold=fold)


def variants():
    v = {}
    for kind in ("LSTM", "GRU", "RNN"):
        for opset in (7, 8, 9, 11, 14, 17):
            v["%s_op%d" % (kind.lower(), opset)] = rnn_variant(kind, opset)
        v[kind.lower() + "_bf_bidir_2layer"] = rnn_variant(kind, 14, batch_first=True, layers=2,
                                                           bidir=True)
        v[kind.lower() + "_states_in_bidir"] = rnn_variant(kind, 13, bidir=True, states_in=True)
        v[kind.lower() + "_states_in_3layer"] = rnn_variant(kind, 12, layers=3, states_in=True)
        v[kind.lower() + "_keep_inits_nofold"] = rnn_variant(kind, 11, layers=2, keep_inits=True,
                                                             fold=False)
    v["rnn_relu_bidir_op10"] = rnn_variant("RNN", 10, bidir=True, nonlinearity="relu")
    for kind in ("LSTM", "GRU"):
        def data(rng, T, N):
            x = rng.standard_normal((N, T, 5)).astype(np.float32)
            lens = rng.integers(1, T + 1, size=N).astype(np.int64)
            lens[0] = T  # pad_packed_sequence's total_length: one sequence is full
            return [x, lens]
        v["packed_%s_bidir" % kind.lower()] = dict(
            model=Packed(kind, input_size=5, hidden_size=6, bidirectional=True, num_layers=2),
            data=data, inputs=["x", "lengths"], outputs=["y", "h_n"], opset=14,
            dynamic_axes={"x": {0: "batch", 1: "seq"}, "lengths": {0: "batch"},
                          "y": {0: "batch", 1: "seq"}, "h_n": {1: "batch"}},
            trace_batch=1)
    for kind in ("LSTMCell", "GRUCell"):
        v["unrolled_%s" % kind.lower()] = dict(
            model=CellLoop(kind, 5, 6), data=lambda rng, T, N: [
                rng.standard_normal((T, N, 5)).astype(np.float32)],
            inputs=["x"], outputs=["y"], opset=13, dynamic_axes={"x": {1: "batch"},
                                                                  "y": {1: "batch"}},
            fixed_T=True)
    v["scripted_grucell_loop"] = dict(
        model=ScriptedGruLoop(), data=lambda rng, T, N: [
            rng.standard_normal((T, N, 5)).astype(np.float32)],
        inputs=["x"], outputs=["y"], opset=14,
        dynamic_axes={"x": {0: "seq", 1: "batch"}, "y": {0: "seq", 1: "batch"}}, script=True)
    lstm_ext = rnn_variant("LSTM", 14, layers=2, bidir=True, states_in=True)
    lstm_ext["external_data"] = True
    v["lstm_external_data"] = lstm_ext
    v["conv_bigru_ctc"] = dict(
        model=ConvGru(), data=lambda rng, T, N: [
            rng.standard_normal((N, 8, T)).astype(np.float32)],
        inputs=["feats"], outputs=["log_probs"], opset=13,
        dynamic_axes={"feats": {0: "batch", 2: "time"}, "log_probs": {0: "batch", 1: "time"}})
    v["embed_bilstm_mha"] = dict(
        model=EmbedLstmAttention(), data=lambda rng, T, N: [
            rng.integers(0, 40, size=(N, T)).astype(np.int64)],
        inputs=["tokens"], outputs=["logits"], opset=14,
        dynamic_axes={"tokens": {0: "batch", 1: "seq"}, "logits": {0: "batch"}})
    v["lstm3_gelu_head_op17"] = dict(
        model=LstmProjHead(), data=lambda rng, T, N: [
            rng.standard_normal((T, N, 6)).astype(np.float32)],
        inputs=["x"], outputs=["y"], opset=17,
        dynamic_axes={"x": {0: "seq", 1: "batch"}, "y": {0: "batch"}})
    return v


def export_variant(root, name, spec, seed):
    rng = common.seed(seed)
    model = spec["model"].eval()
    exported = torch.jit.script(model) if spec.get("script") else model
    d = common.fresh_dir(name, root)
    trace_T, trace_N = 4, spec.get("trace_batch", 2)
    trace = spec["data"](rng, trace_T, trace_N)
    args = tuple(common.to_tensor(a) for a in trace)
    path = os.path.join(d, "model.onnx")
    if spec.get("fold", True):
        common.export(exported, args, path, spec["inputs"], spec["outputs"], spec["opset"],
                      dynamic_axes=spec["dynamic_axes"],
                      keep_initializers_as_inputs=spec.get("keep_inits", False))
    else:
        with torch.no_grad():
            torch.onnx.export(exported, args, path, input_names=spec["inputs"],
                              output_names=spec["outputs"], opset_version=spec["opset"],
                              dynamic_axes=spec["dynamic_axes"], do_constant_folding=False,
                              keep_initializers_as_inputs=spec.get("keep_inits", False))
    if spec.get("external_data"):
        m = onnx.load(path)
        onnx.save_model(m, path, save_as_external_data=True, all_tensors_to_one_file=True,
                        location="weights.bin", size_threshold=64)
    # Another length and batch than the traced ones (the unrolled cells keep their length).
    T, N = (trace_T if spec.get("fixed_T") else 7), 3
    ins = spec["data"](rng, T, N)
    common.write_data_set(d, 0, spec["inputs"], ins, spec["outputs"],
                          common.run_eager(model, ins))
    return d


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--only", default="", help="comma-separated variant names")
    a = ap.parse_args()
    os.makedirs(a.out, exist_ok=True)
    only = set(filter(None, a.only.split(",")))
    failed = []
    for k, (name, spec) in enumerate(sorted(variants().items())):
        if only and name not in only:
            continue
        try:
            export_variant(a.out, name, spec, 7000 + k)
            print("exported", name)
        except Exception as e:  # noqa: BLE001  (an exporter refusal is reported, not fatal)
            failed.append(name)
            print("could not export %s: %s: %s" % (name, type(e).__name__,
                                                   str(e).splitlines()[0][:200]))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
