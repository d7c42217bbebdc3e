#!/usr/bin/env python3
"""recur-bench's PyTorch peer: times a single-node ONNX LSTM/GRU/RNN model as the equivalent
torch.nn module with the same weights, like `recur-run --perf --json`:

  torch_perf.py MODEL.onnx FEEDS_DIR DEVICE THREADS WARMUP REPEAT

FEEDS_DIR/feeds.json names the inputs' .npy files (recur_bench/workload.py writes them).
DEVICE is cuda (CUDA events around each run, TF32 off) or cpu. load_ms covers reading the model,
building the module, copying the weights and moving it to the device (the first CUDA use
included), so it compares with recur's and ONNX Runtime's session creation.

why_not(model) says, without importing torch, why a model is not one PyTorch can express.
"""
import json
import os
import sys
import time

GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# ONNX gate blocks in PyTorch's order: LSTM i,o,f,c -> i,f,g,o; GRU z,r,h -> r,z,n.
TORCH_ORDER = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}


def _attrs(node):
    from onnx import helper
    return {a.name: helper.get_attribute_value(a) for a in node.attribute}


def _single_node(model_path):
    import onnx
    m = onnx.load(model_path, load_external_data=False)
    return m, (m.graph.node[0] if len(m.graph.node) == 1 else None)


def why_not(model_path):
    """None when torch.nn.LSTM/GRU/RNN computes this model, else the reason."""
    try:
        m, node = _single_node(model_path)
    except Exception as e:  # noqa: BLE001
        return "cannot read the model: %s" % e
    if node is None:
        return "PyTorch runs only single-node LSTM/GRU/RNN models (the suite's cases), " \
               "not a graph of %d nodes" % len(m.graph.node)
    if node.op_type not in GATES or node.domain not in ("", "ai.onnx"):
        return "PyTorch runs single LSTM/GRU/RNN nodes, not %s" % node.op_type
    inits = {i.name for i in m.graph.initializer}
    ins = list(node.input) + [""] * (8 - len(node.input))
    if any(ins[k] and ins[k] not in inits for k in (1, 2, 3)):
        return "W, R and B must be initializers"
    if ins[4]:
        return "sequence_lens has no torch.nn equivalent without packing"
    if ins[5] or ins[6]:
        return "initial states are not supported by the PyTorch peer"
    if ins[7]:
        return "torch.nn.LSTM has no peepholes"
    a = _attrs(node)
    if a.get("clip") is not None:
        return "torch.nn has no clip"
    if a.get("activation_alpha") or a.get("activation_beta"):
        return "torch.nn has no activation_alpha/beta"
    if a.get("input_forget", 0):
        return "torch.nn.LSTM has no input_forget"
    if a.get("layout", 0):
        return "layout=1 is not supported by the PyTorch peer"
    acts = [x.decode() if isinstance(x, bytes) else x for x in a.get("activations", [])]
    defaults = {"LSTM": ["Sigmoid", "Tanh", "Tanh"], "GRU": ["Sigmoid", "Tanh"], "RNN": ["Tanh"]}
    per = len(defaults[node.op_type])
    for d in range(len(acts) // per if acts else 0):
        got = acts[d * per:(d + 1) * per]
        if node.op_type == "RNN" and got[0] in ("Tanh", "Relu"):
            continue
        if got != defaults[node.op_type]:
            return "torch.nn has no %s activations %s" % (node.op_type, ",".join(got))
    if node.op_type == "GRU" and not a.get("linear_before_reset", 0):
        return "torch.nn.GRU computes linear_before_reset=1 only (this GRU is 0)"
    return None


def build(model_path, device):
    import numpy as np
    import torch
    from onnx import numpy_helper
    m, node = _single_node(model_path)
    a = _attrs(node)
    op = node.op_type
    inits = {i.name: numpy_helper.to_array(i) for i in m.graph.initializer}
    W, R = inits[node.input[1]], inits[node.input[2]]
    D, GH, I = W.shape
    H = GH // GATES[op]
    B = inits[node.input[3]] if len(node.input) > 3 and node.input[3] else \
        np.zeros((D, 2 * GH), W.dtype)
    kw = {}
    if op == "RNN":
        acts = [x.decode() if isinstance(x, bytes) else x for x in a.get("activations", [])]
        kw["nonlinearity"] = "relu" if acts and acts[0] == "Relu" else "tanh"
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN": torch.nn.RNN}[op]
    mod = cls(I, H, num_layers=1, bidirectional=D == 2, **kw)
    order = TORCH_ORDER[op]

    def blocks(x):
        return torch.from_numpy(np.ascontiguousarray(
            np.concatenate([x[g * H:(g + 1) * H] for g in order], axis=0).astype(np.float32)))

    with torch.no_grad():
        for d in range(D):
            sfx = "_l0" + ("_reverse" if d == 1 else "")
            getattr(mod, "weight_ih" + sfx).copy_(blocks(W[d]))
            getattr(mod, "weight_hh" + sfx).copy_(blocks(R[d]))
            getattr(mod, "bias_ih" + sfx).copy_(blocks(B[d][:GH]))
            getattr(mod, "bias_hh" + sfx).copy_(blocks(B[d][GH:]))
    mod = mod.to(device).eval()
    if W.dtype == np.float16:
        mod = mod.half()
    return mod, node.input[0]


def main():
    if len(sys.argv) != 7:
        sys.exit(__doc__)
    model, feeds_dir, device, threads, warmup, repeat = sys.argv[1:]
    threads, warmup, repeat = int(threads), int(warmup), int(repeat)
    import numpy as np
    import torch
    if threads > 0:
        torch.set_num_threads(threads)
    if device == "cuda":
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    t0 = time.perf_counter()
    if model == "-":
        # The empty model: what the runtime itself holds (for memory over an empty model).
        torch.zeros(1, device=device)
        if device == "cuda":
            torch.cuda.synchronize()
        print(json.dumps({"model": "-", "engine": "torch " + torch.__version__,
                          "load_ms": (time.perf_counter() - t0) * 1e3, "samples_ms": [0.0]}))
        return
    mod, x_name = build(model, device)
    if device == "cuda":
        torch.cuda.synchronize()
    load_ms = (time.perf_counter() - t0) * 1e3
    with open(os.path.join(feeds_dir, "feeds.json")) as f:
        feeds = {e["name"]: e for e in json.load(f)}
    x = torch.from_numpy(np.load(os.path.join(feeds_dir, feeds[x_name]["npy"]))).to(device)
    ms = []
    with torch.inference_mode():
        for _ in range(warmup):
            mod(x)
        if device == "cuda":
            torch.cuda.synchronize()
        for _ in range(repeat):
            if device == "cuda":
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                mod(x)
                b.record()
                b.synchronize()
                ms.append(a.elapsed_time(b))
            else:
                s = time.perf_counter()
                mod(x)
                ms.append((time.perf_counter() - s) * 1e3)
    out = {"model": model, "engine": "torch " + torch.__version__, "device": device,
           "threads": threads, "load_ms": load_ms, "warmup": warmup, "runs": repeat,
           "samples_ms": ms}
    if device == "cuda":
        out["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    print(json.dumps(out))


if __name__ == "__main__":
    main()
