#!/usr/bin/python3
"""An independent float64 numpy implementation of ONNX LSTM, GRU and RNN.

Written from the ONNX operator specification (onnx/defs/rnn/defs.cc) and the semantics recur
has decided where the specification is silent (docs/semantics.md):

- activation_alpha / activation_beta are consumed in order by the activation functions that
  take an alpha (resp. a beta); a function whose value is not listed gets the default of the
  ONNX operator of the same name (Affine and ScaledTanh: alpha=1, beta=0 and alpha=1, beta=1).
  When a bidirectional node lists one set of functions, both directions use it; the reverse
  direction takes further alpha/beta values if the lists have them, else the forward ones.
- clip bounds each gate's whole pre-activation (bias and peephole included), not the cell state.
- LSTM: input_forget=1 means f = 1 - i; peephole P is [i, o, f], o uses the new cell C_t.
- sequence_lens: Y is zero past each sequence's length, Y_h / Y_c come from its last valid
  step, a length of 0 gives zeros, and the reverse direction starts at step len-1.
- layout=1: X is [N,T,I], Y [N,T,D,H], initial_h / Y_h / initial_c / Y_c are [N,D,H].

Each sequence is run on its own, one time step at a time, as a plain loop over vectors.
The arithmetic is float64 whatever the input dtype; outputs are cast back to X's dtype.

Usage as a library:
    Y, Y_h, Y_c = rnn_oracle.lstm(X, W, R, B=..., hidden_size=..., direction=..., ...)
    Y, Y_h = rnn_oracle.gru(...);  Y, Y_h = rnn_oracle.rnn(...)
    outputs = rnn_oracle.run_node(node_proto, [X, W, R, ...])   # from an onnx NodeProto
"""

import numpy as np

# name (lower case) -> (takes alpha, takes beta, default alpha, default beta, function)
_ACTIVATIONS = {
    "relu": (False, False, None, None, lambda x, a, b: np.maximum(x, 0.0)),
    "tanh": (False, False, None, None, lambda x, a, b: np.tanh(x)),
    "sigmoid": (False, False, None, None, lambda x, a, b: 1.0 / (1.0 + np.exp(-x))),
    "affine": (True, True, 1.0, 0.0, lambda x, a, b: a * x + b),
    "leakyrelu": (True, False, 0.01, None, lambda x, a, b: np.where(x >= 0, x, a * x)),
    "thresholdedrelu": (True, False, 1.0, None, lambda x, a, b: np.where(x > a, x, 0.0)),
    "scaledtanh": (True, True, 1.0, 1.0, lambda x, a, b: a * np.tanh(b * x)),
    "hardsigmoid": (True, True, 0.2, 0.5, lambda x, a, b: np.clip(a * x + b, 0.0, 1.0)),
    "elu": (True, False, 1.0, None, lambda x, a, b: np.where(x >= 0, x, a * (np.exp(x) - 1.0))),
    "softsign": (False, False, None, None, lambda x, a, b: x / (1.0 + np.abs(x))),
    "softplus": (False, False, None, None, lambda x, a, b: np.logaddexp(0.0, x)),
}

_DEFAULT_ACTIVATIONS = {
    "LSTM": ["Sigmoid", "Tanh", "Tanh"],
    "GRU": ["Sigmoid", "Tanh"],
    "RNN": ["Tanh"],
}
_GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}


def _f32(v):
    """Attribute floats are float32 in an ONNX model."""
    return float(np.float32(v))


class _Act:
    def __init__(self, name, alpha, beta):
        key = name.lower()
        if key not in _ACTIVATIONS:
            raise ValueError("unknown activation %r" % name)
        self.name = name
        self.alpha = alpha
        self.beta = beta
        self.fn = _ACTIVATIONS[key][4]

    def __call__(self, x):
        return self.fn(x, self.alpha, self.beta)

    def __repr__(self):
        return "%s(%s,%s)" % (self.name, self.alpha, self.beta)


def parse_activations(op, num_directions, names=None, alphas=None, betas=None):
    """The activation functions of each direction: a list of lists."""
    per_dir = len(_DEFAULT_ACTIVATIONS[op])
    alphas = [_f32(a) for a in (alphas or [])]
    betas = [_f32(b) for b in (betas or [])]
    names = list(names) if names else []
    one_set_shared = False
    if not names:
        names = _DEFAULT_ACTIVATIONS[op] * num_directions
    elif len(names) == per_dir and num_directions == 2:
        one_set_shared = True
        names = names * 2
    elif len(names) != per_dir * num_directions:
        raise ValueError("%s needs %d activations, got %d" %
                         (op, per_dir * num_directions, len(names)))
    ai = bi = 0
    acts = []
    for k, name in enumerate(names):
        takes_a, takes_b, def_a, def_b, _ = _ACTIVATIONS[name.lower()]
        alpha = beta = None
        # The reverse direction of a shared set falls back on the forward direction's values.
        twin = acts[k - per_dir] if one_set_shared and k >= per_dir else None
        if takes_a:
            if ai < len(alphas):
                alpha = alphas[ai]
                ai += 1
            else:
                alpha = twin.alpha if twin else def_a
        if takes_b:
            if bi < len(betas):
                beta = betas[bi]
                bi += 1
            else:
                beta = twin.beta if twin else def_b
        acts.append(_Act(name, alpha, beta))
    return [acts[d * per_dir:(d + 1) * per_dir] for d in range(num_directions)]


def _clip(x, clip):
    return x if clip is None else np.clip(x, -clip, clip)


def _lstm_step(x, h, c, W, R, Wb, Rb, P, acts, clip, input_forget):
    H = h.shape[0]
    f_act, g_act, h_act = acts
    pre = W @ x + R @ h + Wb + Rb  # gate blocks i, o, f, c
    pi, po, pf = P[0:H], P[H:2 * H], P[2 * H:3 * H]
    i = f_act(_clip(pre[0:H] + pi * c, clip))
    if input_forget:
        f = 1.0 - i
    else:
        f = f_act(_clip(pre[2 * H:3 * H] + pf * c, clip))
    c_tilde = g_act(_clip(pre[3 * H:4 * H], clip))
    c_new = f * c + i * c_tilde
    o = f_act(_clip(pre[H:2 * H] + po * c_new, clip))
    h_new = o * h_act(c_new)
    return h_new, c_new


def _gru_step(x, h, W, R, Wb, Rb, acts, clip, linear_before_reset):
    H = h.shape[0]
    f_act, g_act = acts
    Wz, Wr, Wh = W[0:H], W[H:2 * H], W[2 * H:3 * H]
    Rz, Rr, Rh = R[0:H], R[H:2 * H], R[2 * H:3 * H]
    Wbz, Wbr, Wbh = Wb[0:H], Wb[H:2 * H], Wb[2 * H:3 * H]
    Rbz, Rbr, Rbh = Rb[0:H], Rb[H:2 * H], Rb[2 * H:3 * H]
    z = f_act(_clip(Wz @ x + Rz @ h + Wbz + Rbz, clip))
    r = f_act(_clip(Wr @ x + Rr @ h + Wbr + Rbr, clip))
    if linear_before_reset:
        h_tilde = g_act(_clip(Wh @ x + r * (Rh @ h + Rbh) + Wbh, clip))
    else:
        h_tilde = g_act(_clip(Wh @ x + Rh @ (r * h) + Rbh + Wbh, clip))
    return (1.0 - z) * h_tilde + z * h


def _rnn_step(x, h, W, R, Wb, Rb, acts, clip):
    return acts[0](_clip(W @ x + R @ h + Wb + Rb, clip))


def run(op, X, W, R, B=None, sequence_lens=None, initial_h=None, initial_c=None, P=None,
        hidden_size=None, direction="forward", activations=None, activation_alpha=None,
        activation_beta=None, clip=None, input_forget=0, linear_before_reset=0, layout=0):
    """Runs one ONNX LSTM / GRU / RNN node. Returns (Y, Y_h, Y_c) for LSTM, else (Y, Y_h)."""
    if op not in _GATES:
        raise ValueError("op must be LSTM, GRU or RNN")
    out_dtype = X.dtype
    f64 = lambda a: None if a is None else np.asarray(a, dtype=np.float64)
    X, W, R, B, initial_h, initial_c, P = map(f64, (X, W, R, B, initial_h, initial_c, P))
    if layout == 1:
        X = X.transpose(1, 0, 2)
        if initial_h is not None:
            initial_h = initial_h.transpose(1, 0, 2)
        if initial_c is not None:
            initial_c = initial_c.transpose(1, 0, 2)
    T, N, _ = X.shape
    D = 2 if direction == "bidirectional" else 1
    if direction not in ("forward", "reverse", "bidirectional"):
        raise ValueError("bad direction %r" % direction)
    G = _GATES[op]
    H = int(hidden_size) if hidden_size else R.shape[-1]
    assert W.shape[:2] == (D, G * H) and R.shape == (D, G * H, H), (W.shape, R.shape)
    if B is None:
        B = np.zeros((D, 2 * G * H))
    if P is None:
        P = np.zeros((D, 3 * H))
    if initial_h is None:
        initial_h = np.zeros((D, N, H))
    if initial_c is None:
        initial_c = np.zeros((D, N, H))
    lens = [T] * N if sequence_lens is None else [int(v) for v in np.asarray(sequence_lens)]
    assert all(0 <= L <= T for L in lens), lens
    clip = None if clip is None else _f32(clip)
    acts = parse_activations(op, D, activations, activation_alpha, activation_beta)

    Y = np.zeros((T, D, N, H))
    Y_h = np.zeros((D, N, H))
    Y_c = np.zeros((D, N, H))
    for d in range(D):
        backward = direction == "reverse" or d == 1
        Wb, Rb = B[d, :G * H], B[d, G * H:]
        for n in range(N):
            L = lens[n]
            h = initial_h[d, n].copy()
            c = initial_c[d, n].copy()
            steps = range(L - 1, -1, -1) if backward else range(L)
            for t in steps:
                x = X[t, n]
                if op == "LSTM":
                    h, c = _lstm_step(x, h, c, W[d], R[d], Wb, Rb, P[d], acts[d], clip,
                                      input_forget)
                elif op == "GRU":
                    h = _gru_step(x, h, W[d], R[d], Wb, Rb, acts[d], clip, linear_before_reset)
                else:
                    h = _rnn_step(x, h, W[d], R[d], Wb, Rb, acts[d], clip)
                Y[t, d, n] = h
            if L > 0:
                Y_h[d, n] = h
                Y_c[d, n] = c
    if layout == 1:
        Y = Y.transpose(2, 0, 1, 3)
        Y_h = Y_h.transpose(1, 0, 2)
        Y_c = Y_c.transpose(1, 0, 2)
    outs = (Y.astype(out_dtype), Y_h.astype(out_dtype))
    if op == "LSTM":
        outs += (Y_c.astype(out_dtype),)
    return outs


def lstm(X, W, R, **kw):
    return run("LSTM", X, W, R, **kw)


def gru(X, W, R, **kw):
    return run("GRU", X, W, R, **kw)


def rnn(X, W, R, **kw):
    return run("RNN", X, W, R, **kw)


_INPUT_NAMES = ["X", "W", "R", "B", "sequence_lens", "initial_h", "initial_c", "P"]


def run_node(node, inputs):
    """Runs an onnx NodeProto (LSTM, GRU or RNN) on a list of arrays in the node's input
    order (None for an omitted input). Returns the outputs in the node's output order."""
    from onnx import helper

    attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    kw = {}
    for k, v in attrs.items():
        if isinstance(v, bytes):
            v = v.decode()
        if k == "activations":
            v = [s.decode() if isinstance(s, bytes) else s for s in v]
        if k in ("activation_alpha", "activation_beta"):
            v = list(v)
        if k == "output_sequence":  # opset 1: Y is optional anyway
            continue
        kw[k] = v
    args = {}
    for name, value in zip(_INPUT_NAMES, inputs):
        if value is not None and name not in ("X", "W", "R"):
            args[name] = value
    X, W, R = inputs[0], inputs[1], inputs[2]
    return run(node.op_type, X, W, R, **args, **kw)
