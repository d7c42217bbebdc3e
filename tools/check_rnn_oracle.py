#!/usr/bin/python3
"""Validates tools/rnn_oracle.py against two sources that do not share its code:

(a) the 12 RNN-family ONNX backend node tests (expected outputs from ONNX's own reference),
(b) PyTorch nn.LSTM / nn.GRU / nn.RNN (tanh and relu) in float64, with weights mapped to ONNX's
    gate order; unidirectional and bidirectional, batch_first (layout=1) or not, with and
    without initial states, and with per-sequence lengths through pack_padded_sequence
    (which checks Y zeroed past each length, Y_h from the last valid step, and the reverse
    direction starting at each sequence's own end).

Usage: /usr/bin/python3 tools/check_rnn_oracle.py [--testdata DIR]
Exits 1 if any comparison fails.
"""

import argparse
import glob
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rnn_oracle  # noqa: E402

BACKEND_TESTS = [
    "test_lstm_defaults", "test_lstm_with_initial_bias", "test_lstm_with_peepholes",
    "test_lstm_batchwise", "test_gru_defaults", "test_gru_seq_length",
    "test_gru_with_initial_bias", "test_gru_batchwise", "test_rnn_seq_length",
    "test_simple_rnn_defaults", "test_simple_rnn_with_initial_bias", "test_simple_rnn_batchwise",
]


def read_pb(path):
    import onnx
    from onnx import numpy_helper
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return numpy_helper.to_array(t)


def check_backend(root):
    import onnx
    failures = 0
    for name in BACKEND_TESTS:
        d = os.path.join(root, name)
        model = onnx.load(os.path.join(d, "model.onnx"))
        node = model.graph.node[0]
        ds = os.path.join(d, "test_data_set_0")
        feeds = {}
        graph_inputs = [i.name for i in model.graph.input]
        for k, p in enumerate(sorted(glob.glob(os.path.join(ds, "input_*.pb")))):
            feeds[graph_inputs[k]] = read_pb(p)
        inputs = [feeds.get(n) if n else None for n in node.input]
        got = rnn_oracle.run_node(node, inputs)
        worst = 0.0
        ok = True
        graph_outputs = [o.name for o in model.graph.output]
        for k, p in enumerate(sorted(glob.glob(os.path.join(ds, "output_*.pb")))):
            want = read_pb(p)
            g = got[list(node.output).index(graph_outputs[k])]
            diff = float(np.max(np.abs(g.astype(np.float64) - want))) if want.size else 0.0
            worst = max(worst, diff)
            ok &= g.shape == want.shape and np.allclose(g, want, rtol=1e-5, atol=1e-6)
        failures += not ok
        print("%-4s backend %-34s max|diff| %.2e" % ("ok" if ok else "FAIL", name, worst))
    return failures


# --- PyTorch -------------------------------------------------------------------------------

def onnx_weights_from_torch(mod, kind, D):
    """W, R, B in ONNX layout from a PyTorch module's parameters."""
    H = mod.hidden_size

    def blocks(t, order):
        parts = t.detach().numpy().reshape((len(order), H) + t.shape[1:])
        return np.concatenate([parts[i] for i in order], axis=0)

    # PyTorch orders: LSTM i,f,g,o; GRU r,z,n; RNN one gate. ONNX: LSTM i,o,f,c; GRU z,r,h.
    order = {"LSTM": [0, 3, 1, 2], "GRU": [1, 0, 2], "RNN": [0]}[kind]
    Ws, Rs, Bs = [], [], []
    for d in range(D):
        sfx = "_l0" + ("_reverse" if d == 1 else "")
        Ws.append(blocks(getattr(mod, "weight_ih" + sfx), order))
        Rs.append(blocks(getattr(mod, "weight_hh" + sfx), order))
        Bs.append(np.concatenate([blocks(getattr(mod, "bias_ih" + sfx), order),
                                  blocks(getattr(mod, "bias_hh" + sfx), order)]))
    return np.stack(Ws), np.stack(Rs), np.stack(Bs)


def check_torch(seed=0):
    import torch
    from torch.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    failures = 0
    count = 0
    configs = []
    for kind in ["LSTM", "GRU", "RNN_tanh", "RNN_relu"]:
        for bidir in [False, True]:
            for batch_first in [False, True]:
                for init in [False, True]:
                    for lengths in [None, "ragged"]:
                        configs.append((kind, bidir, batch_first, init, lengths))
    for kind, bidir, batch_first, init, lengths in configs:
        T, N, I, H = 5, 3, 4, 6
        D = 2 if bidir else 1
        base = kind.split("_")[0]
        if base == "LSTM":
            mod = torch.nn.LSTM(I, H, bidirectional=bidir, batch_first=batch_first)
        elif base == "GRU":
            mod = torch.nn.GRU(I, H, bidirectional=bidir, batch_first=batch_first)
        else:
            mod = torch.nn.RNN(I, H, nonlinearity=kind.split("_")[1], bidirectional=bidir,
                               batch_first=batch_first)
        mod = mod.double()
        x = rng.standard_normal((N, T, I) if batch_first else (T, N, I))
        h0 = rng.standard_normal((D, N, H)) if init else None
        c0 = rng.standard_normal((D, N, H)) if init else None
        lens = np.array([5, 2, 4], dtype=np.int32) if lengths else None

        xt = torch.from_numpy(x)
        state = None
        if init:
            state = (torch.from_numpy(h0), torch.from_numpy(c0)) if base == "LSTM" \
                else torch.from_numpy(h0)
        with torch.no_grad():
            if lens is not None:
                packed = pack_padded_sequence(xt, torch.from_numpy(lens.astype(np.int64)),
                                              batch_first=batch_first, enforce_sorted=False)
                out, hn = mod(packed, state)
                out, _ = pad_packed_sequence(out, batch_first=batch_first, total_length=T)
            else:
                out, hn = mod(xt, state)
        if base == "LSTM":
            hn, cn = hn
            cn = cn.numpy()
        hn = hn.numpy()
        out = out.numpy()
        # PyTorch gives [T,N,D*H] (or [N,T,D*H]) and [D,N,H]; ONNX layout 0 gives [T,D,N,H] and
        # [D,N,H], layout 1 [N,T,D,H] and [N,D,H].
        if batch_first:
            want_y = out.reshape(N, T, D, H)
            want_h = hn.transpose(1, 0, 2)
            want_c = cn.transpose(1, 0, 2) if base == "LSTM" else None
        else:
            want_y = out.reshape(T, N, D, H).transpose(0, 2, 1, 3)
            want_h = hn
            want_c = cn if base == "LSTM" else None

        W, R, B = onnx_weights_from_torch(mod, base, D)
        kw = dict(B=B, hidden_size=H, direction="bidirectional" if bidir else "forward",
                  layout=1 if batch_first else 0)
        if lens is not None:
            kw["sequence_lens"] = lens
        if init:
            layout_state = (lambda s: s.transpose(1, 0, 2)) if batch_first else (lambda s: s)
            kw["initial_h"] = layout_state(h0)
            if base == "LSTM":
                kw["initial_c"] = layout_state(c0)
        if base == "GRU":
            kw["linear_before_reset"] = 1  # PyTorch's GRU applies r after the recurrent GEMM
        if kind == "RNN_relu":
            kw["activations"] = ["Relu"] * D
        got = rnn_oracle.run(base, x, W, R, **kw)
        pairs = [(got[0], want_y), (got[1], want_h)]
        if base == "LSTM":
            pairs.append((got[2], want_c))
        if bidir:
            # direction="reverse" on the reverse half's weights is the reverse half's output.
            rkw = dict(kw, B=B[1:], direction="reverse")
            if init:
                rkw["initial_h"] = kw["initial_h"][1:] if not batch_first \
                    else kw["initial_h"][:, 1:]
                if base == "LSTM":
                    rkw["initial_c"] = kw["initial_c"][1:] if not batch_first \
                        else kw["initial_c"][:, 1:]
            if kind == "RNN_relu":
                rkw["activations"] = ["Relu"]
            rev = rnn_oracle.run(base, x, W[1:], R[1:], **rkw)
            pairs.append((rev[0], want_y[:, :, 1:] if batch_first else want_y[:, 1:]))
            pairs.append((rev[1], want_h[:, 1:] if batch_first else want_h[1:]))
        worst = max(float(np.max(np.abs(g - w))) for g, w in pairs)
        ok = all(g.shape == w.shape and np.allclose(g, w, rtol=1e-10, atol=1e-12)
                 for g, w in pairs)
        failures += not ok
        count += 1
        label = "%s %s %s%s%s" % (kind, "bidirectional" if bidir else "forward",
                                  "batch_first" if batch_first else "seq_first",
                                  " initial_state" if init else "",
                                  " seq_lens=[5,2,4]" if lens is not None else "")
        print("%-4s torch   %-58s max|diff| %.2e" % ("ok" if ok else "FAIL", label, worst))
    return failures, count


def check_identities(seed=1):
    """Attributes PyTorch lacks, checked through identities that hold exactly in float64."""
    rng = np.random.default_rng(seed)
    T, N, I, H, D = 4, 3, 5, 7, 2
    x = rng.standard_normal((T, N, I))
    W = rng.standard_normal((D, 4 * H, I))
    R = rng.standard_normal((D, 4 * H, H))
    B = rng.standard_normal((D, 8 * H))
    P = rng.standard_normal((D, 3 * H))
    h0 = rng.standard_normal((D, N, H))
    c0 = rng.standard_normal((D, N, H))
    lens = np.array([4, 0, 2], dtype=np.int32)
    common = dict(B=B, P=P, initial_h=h0, initial_c=c0, sequence_lens=lens,
                  direction="bidirectional")
    results = []

    # input_forget: f = 1 - i = sigmoid(-a_i), so negating the i block (and P_i) into the f
    # block must give the same result.
    def neg_i_into_f(M):
        M = M.copy()
        M[:, 2 * H:3 * H] = -M[:, 0:H]
        return M
    B2 = B.copy()
    for off in (0, 4 * H):
        B2[:, off + 2 * H:off + 3 * H] = -B2[:, off:off + H]
    P2 = P.copy()
    P2[:, 2 * H:3 * H] = -P2[:, 0:H]
    a = rnn_oracle.lstm(x, W, R, input_forget=1, **common)
    b = rnn_oracle.lstm(x, neg_i_into_f(W), neg_i_into_f(R),
                        **dict(common, B=B2, P=P2))
    results.append(("LSTM input_forget == negated i block as f", a, b))

    # A clip larger than any pre-activation changes nothing.
    a = rnn_oracle.lstm(x, W, R, clip=1e6, **common)
    b = rnn_oracle.lstm(x, W, R, **common)
    results.append(("LSTM clip=1e6 == no clip", a, b))

    # Explicit defaults, ScaledTanh(1,1) == Tanh, Affine(1,0) == identity of a Relu'd value.
    a = rnn_oracle.gru(x, W[:, :3 * H], R[:, :3 * H], activations=["Sigmoid", "Tanh"] * 2,
                       B=B[:, :6 * H], direction="bidirectional")
    b = rnn_oracle.gru(x, W[:, :3 * H], R[:, :3 * H], activations=["Sigmoid", "ScaledTanh"],
                       B=B[:, :6 * H], direction="bidirectional")
    results.append(("GRU shared [Sigmoid,ScaledTanh(1,1)] == defaults", a, b))

    # Y_h is Y at each sequence's last valid step (forward) or at t=0 (reverse); zero for 0.
    y, yh, yc = rnn_oracle.lstm(x, W, R, **common)
    want = np.zeros_like(yh)
    for n, L in enumerate(lens):
        if L:
            want[0, n] = y[L - 1, 0, n]
            want[1, n] = y[0, 1, n]
    results.append(("LSTM Y_h == Y at the last valid step", (yh,), (want,)))
    zero_past = all(not np.any(y[L:, :, n]) for n, L in enumerate(lens))
    results.append(("LSTM Y zero past each length", (np.array(zero_past),), (np.array(True),)))

    failures = 0
    for label, got, want in results:
        worst = max(float(np.max(np.abs(np.asarray(g, np.float64) - np.asarray(w, np.float64))))
                    for g, w in zip(got, want))
        ok = worst <= 1e-12
        failures += not ok
        print("%-4s ident   %-58s max|diff| %.2e" % ("ok" if ok else "FAIL", label, worst))
    return failures, len(results)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--testdata", default="/usr/share/libonnx-testdata/data/node")
    args = ap.parse_args()
    import torch
    print("numpy %s, torch %s" % (np.__version__, torch.__version__))
    bf = check_backend(args.testdata)
    tf, tn = check_torch()
    jf, jn = check_identities()
    print("backend node tests: %d of %d agree" % (len(BACKEND_TESTS) - bf, len(BACKEND_TESTS)))
    print("pytorch configurations: %d of %d agree" % (tn - tf, tn))
    print("identities: %d of %d hold" % (jn - jf, jn))
    return 1 if bf or tf or jf else 0


if __name__ == "__main__":
    sys.exit(main())
