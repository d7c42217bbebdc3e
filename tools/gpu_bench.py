#!/usr/bin/env python3
"""recur's cudnn provider against PyTorch's cuDNN RNNs, on the standard suite (docs/benchmarking.md).

For each case: the ONNX model (random weights, scale 0.1), the same weights in torch.nn.LSTM,
GRU or RNN, and
  - correctness: recur's outputs vs PyTorch's on the same random input (max |diff|);
  - speed: recur-run --perf with inputs and outputs on the GPU (--device-io) and with host
    inputs and outputs, vs PyTorch under inference_mode timed with CUDA events; alternated
    A B A B, medians (docs/benchmarking.md's rules).
fp32 with TF32 off on both sides, then fp16 for the cases cuDNN can run. lstm_large,
lstm_peep and gru_lbr0 are also timed on recur's onednn provider (when built) and on ONNX
Runtime's CPU provider: lstm_peep and gru_lbr0 are what cuDNN cannot run, so there recur's GPU
path is cuda-generic, where ONNX Runtime's CUDA provider would fall back to the CPU.
Every case at N <= 32 is also checked against recur's reference provider (max |diff|), which
covers the cases PyTorch cannot compute (peepholes, linear_before_reset=0).

Further sections (float32):
  - cuda-generic alone on the cuDNN-capable cases (the generic kernel's cost next to cuDNN's);
  - CUDA graphs off and on (recur-run --cuda-graphs) on lstm_stream, for cudnn and cuda-generic,
    alternated: the launch overhead the recording removes at batch 1; and cuda-generic's
    persistent kernel (cuda-generic.persistent=1) beside its per-step launches;
  - the models in models/ with --providers cudnn,cuda-generic, stacked RNN fusion on and off,
    from their test_data_set_0 inputs.

Writes bench.json and bench.md under --out. `--device cpu` is a dry run of the whole script on
a machine without a GPU: recur's reference provider and PyTorch on the CPU, small sizes.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

SUITE = [
    # name, op, T, N, I, H, options
    ("lstm_stream", "LSTM", 50, 1, 64, 128, {}),
    ("lstm_med", "LSTM", 100, 32, 256, 512, {}),
    ("lstm_large", "LSTM", 100, 64, 1024, 1024, {}),
    ("gru_lbr1", "GRU", 100, 32, 256, 512, {"linear_before_reset": 1}),
    ("gru_lbr0", "GRU", 100, 32, 256, 512, {"linear_before_reset": 0}),
    ("bilstm", "LSTM", 100, 16, 128, 256, {"direction": "bidirectional"}),
    ("lstm_peep", "LSTM", 100, 32, 256, 512, {"peepholes": True}),
    ("rnn_tanh", "RNN", 100, 32, 256, 512, {}),
]
GATES = {"LSTM": 4, "GRU": 3, "RNN": 1}
# ONNX gate blocks in PyTorch's order: LSTM i,o,f,c -> i,f,g,o; GRU z,r,h -> r,z,n.
TORCH_ORDER = {"LSTM": [0, 2, 3, 1], "GRU": [1, 0, 2], "RNN": [0]}


def make_model(case, dtype, path, rng):
    name, op, T, N, I, H, opt = case
    D = 2 if opt.get("direction") == "bidirectional" else 1
    G = GATES[op]
    npdt = np.float16 if dtype == "float16" else np.float32
    tdt = TensorProto.FLOAT16 if dtype == "float16" else TensorProto.FLOAT
    w = {
        "W": (0.1 * rng.standard_normal((D, G * H, I))).astype(npdt),
        "R": (0.1 * rng.standard_normal((D, G * H, H))).astype(npdt),
        "B": (0.1 * rng.standard_normal((D, 2 * G * H))).astype(npdt),
    }
    inputs = ["X", "W", "R", "B"]
    if opt.get("peepholes"):
        w["P"] = (0.1 * rng.standard_normal((D, 3 * H))).astype(npdt)
        inputs += ["", "", "", "P"]
    outputs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
    attrs = {"hidden_size": H}
    if D == 2:
        attrs["direction"] = "bidirectional"
    if op == "GRU":
        attrs["linear_before_reset"] = opt.get("linear_before_reset", 0)
    node = helper.make_node(op, inputs, outputs, name=name, **attrs)
    graph = helper.make_graph(
        [node], name,
        [helper.make_tensor_value_info("X", tdt, [T, N, I])],
        [helper.make_tensor_value_info("Y", tdt, [T, D, N, H]),
         helper.make_tensor_value_info("Y_h", tdt, [D, N, H])] +
        ([helper.make_tensor_value_info("Y_c", tdt, [D, N, H])] if op == "LSTM" else []),
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)
    x = rng.standard_normal((T, N, I)).astype(npdt)
    return w, x


def torch_module(case, w, dtype, device):
    import torch
    name, op, T, N, I, H, opt = case
    D = 2 if opt.get("direction") == "bidirectional" else 1
    G = GATES[op]
    cls = {"LSTM": torch.nn.LSTM, "GRU": torch.nn.GRU, "RNN": torch.nn.RNN}[op]
    m = cls(I, H, num_layers=1, bidirectional=D == 2)
    order = TORCH_ORDER[op]

    def blocks(a):  # [G*H, ...] in ONNX gate order -> PyTorch's
        return np.concatenate([a[g * H:(g + 1) * H] for g in order], axis=0)

    with torch.no_grad():
        for d in range(D):
            sfx = "_l0" + ("_reverse" if d == 1 else "")
            getattr(m, "weight_ih" + sfx).copy_(torch.from_numpy(blocks(w["W"][d].astype(np.float32))))
            getattr(m, "weight_hh" + sfx).copy_(torch.from_numpy(blocks(w["R"][d].astype(np.float32))))
            b = w["B"][d].astype(np.float32)
            getattr(m, "bias_ih" + sfx).copy_(torch.from_numpy(blocks(b[:G * H])))
            getattr(m, "bias_hh" + sfx).copy_(torch.from_numpy(blocks(b[G * H:])))
    m = m.to(device)
    if dtype == "float16":
        m = m.half()
    return m.eval()


def torch_outputs(m, x, op, device):
    import torch
    with torch.inference_mode():
        out = m(torch.from_numpy(x).to(device))
    y, state = out
    T, N = x.shape[0], x.shape[1]
    D = 2 if m.bidirectional else 1
    H = m.hidden_size
    # PyTorch's y is [T,N,D*H]; ONNX's [T,D,N,H].
    y = y.reshape(T, N, D, H).permute(0, 2, 1, 3)
    res = {"Y": y.float().cpu().numpy()}
    if op == "LSTM":
        res["Y_h"] = state[0].float().cpu().numpy()
        res["Y_c"] = state[1].float().cpu().numpy()
    else:
        res["Y_h"] = state.float().cpu().numpy()
    return res


def torch_time(m, x, device, warmup, repeat):
    import torch
    xt = torch.from_numpy(x).to(device)
    ms = []
    with torch.inference_mode():
        for _ in range(warmup):
            m(xt)
        for _ in range(repeat):
            if device == "cuda":
                a = torch.cuda.Event(enable_timing=True)
                b = torch.cuda.Event(enable_timing=True)
                a.record()
                m(xt)
                b.record()
                b.synchronize()
                ms.append(a.elapsed_time(b))
            else:
                t0 = time.perf_counter()
                m(xt)
                ms.append((time.perf_counter() - t0) * 1e3)
    return ms


def recur_env(args):
    env = dict(os.environ)
    extra = os.environ.get("RECUR_LD_LIBRARY_PATH", "")
    if extra:
        env["LD_LIBRARY_PATH"] = extra + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def recur_perf(args, model, providers, device_io, warmup, repeat, threads=0, extra=(),
               inputs=None):
    cmd = [args.recur, model, "--perf", "--json", "--providers", providers,
           "--warmup", str(warmup), "--repeat", str(repeat)] + list(extra)
    if inputs:
        for name, path in inputs:
            cmd += ["--input", name + "=" + path]
    else:
        cmd.append("--random-inputs")
    if device_io:
        cmd.append("--device-io")
    if threads:
        cmd += ["--threads", str(threads)]
    p = subprocess.run(cmd, capture_output=True, text=True, env=recur_env(args))
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-500:]}
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    return json.loads(line)


def recur_outputs(args, model, x, providers, work):
    xp = os.path.join(work, "x.npy")
    np.save(xp, x)
    od = os.path.join(work, "out_" + providers.replace(",", "_"))
    cmd = [args.recur, model, "--input", "X=" + xp, "--providers", providers, "--output-dir", od]
    p = subprocess.run(cmd, capture_output=True, text=True, env=recur_env(args))
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-500:]
    return {k: np.load(os.path.join(od, k + ".npy")).astype(np.float32)
            for k in ("Y", "Y_h", "Y_c") if os.path.exists(os.path.join(od, k + ".npy"))}, None


def explain(args, model, providers):
    p = subprocess.run([args.recur, model, "--explain", "--plan-only", "--providers", providers],
                       capture_output=True, text=True, env=recur_env(args))
    return p.stdout


def graphs_section(args, work, built, rng):
    """CUDA graphs off and on, alternated, on lstm_stream (device-resident inputs)."""
    out = []
    case = next(c for c in SUITE if c[0] == "lstm_stream")
    path = os.path.join(work, "lstm_stream_graphs.onnx")
    make_model(case, "float32", path, rng)
    for providers in ("cudnn", "cuda-generic"):
        if providers not in built:
            continue
        r = {"case": "lstm_stream graphs", "dtype": "float32", "provider": providers}
        off, on = [], []
        for _ in range(5):
            a = recur_perf(args, path, providers, True, args.warmup, args.repeat)
            b = recur_perf(args, path, providers, True, args.warmup, args.repeat,
                           extra=["--cuda-graphs"])
            if "error" in a or "error" in b:
                r["error"] = a.get("error") or b.get("error")
                break
            off.append(a["latency_ms"]["p50"])
            on.append(b["latency_ms"]["p50"])
        if off and on:
            r["graphs_off_p50_ms"] = statistics.median(off)
            r["graphs_on_p50_ms"] = statistics.median(on)
        if providers == "cuda-generic" and "error" not in r:
            # The persistent kernel (one launch for every step), before and after.
            pers = []
            for _ in range(5):
                c = recur_perf(args, path, providers, True, args.warmup, args.repeat,
                               extra=["--set", "cuda-generic.persistent=1"])
                if "error" in c:
                    r["error"] = c["error"]
                    break
                pers.append(c["latency_ms"]["p50"])
            if pers:
                r["persistent_p50_ms"] = statistics.median(pers)
        print(json.dumps(r), flush=True)
        out.append(r)
    return out


def models_section(args, work):
    """models/ with the GPU providers only, fusion off and on, and the reference on the CPU."""
    out = []
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "models")
    for name in sorted(os.listdir(root)):
        model = os.path.join(root, name, "model.onnx")
        ds = os.path.join(root, name, "test_data_set_0")
        if not os.path.exists(model) or not os.path.isdir(ds):
            continue
        graph = onnx.load(model).graph
        inits = {i.name for i in graph.initializer}
        names = [i.name for i in graph.input if i.name not in inits]
        inputs = []
        for k in range(len(names)):
            f = os.path.join(ds, f"input_{k}.pb")
            if not os.path.exists(f):
                break
            t = onnx.TensorProto()
            with open(f, "rb") as fh:
                t.ParseFromString(fh.read())
            p = os.path.join(work, f"{name}_in{k}.npy")
            np.save(p, numpy_helper.to_array(t))
            inputs.append((t.name or names[k], p))
        r = {"case": "model " + name, "dtype": "float32", "provider": "cudnn,cuda-generic"}
        off, on, ref = [], [], []
        for _ in range(3):
            a = recur_perf(args, model, "cudnn,cuda-generic", False, args.warmup, args.repeat,
                           extra=["--fusion", "off"], inputs=inputs)
            b = recur_perf(args, model, "cudnn,cuda-generic", False, args.warmup, args.repeat,
                           extra=["--fusion", "on"], inputs=inputs)
            c = recur_perf(args, model, "reference", False, 1, 5, inputs=inputs)
            if "error" in a or "error" in b:
                r["error"] = a.get("error") or b.get("error")
                break
            off.append(a["latency_ms"]["p50"])
            on.append(b["latency_ms"]["p50"])
            if "latency_ms" in c:
                ref.append(c["latency_ms"]["p50"])
        if off:
            r["fusion_off_p50_ms"] = statistics.median(off)
            r["fusion_on_p50_ms"] = statistics.median(on)
        if ref:
            r["reference_cpu_p50_ms"] = statistics.median(ref)
        print(json.dumps(r), flush=True)
        out.append(r)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--recur", required=True, help="path to recur-run")
    ap.add_argument("--out", default="out")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cases", default="", help="comma-separated subset of the suite")
    args = ap.parse_args()
    os.makedirs(args.out, exist_ok=True)
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    gpu = args.device == "cuda"
    suite = SUITE
    if not gpu:  # dry run: small sizes, the reference provider, PyTorch on the CPU
        suite = [(n, op, 5, 2, 8, 16, o) for (n, op, T, N, I, H, o) in SUITE]
        args.warmup, args.repeat = 1, 3
    if args.cases:
        keep = set(args.cases.split(","))
        suite = [c for c in suite if c[0] in keep]
    providers = "cudnn,cuda-generic,onednn,reference" if gpu else "reference"
    avail = subprocess.run([args.recur, "--list-providers"], capture_output=True, text=True,
                           env=recur_env(args)).stdout
    built = [l.split(":")[0] for l in avail.splitlines() if ":" in l]
    providers = ",".join(p for p in providers.split(",") if p in built)
    rng = np.random.default_rng(20261121)
    results = []
    with tempfile.TemporaryDirectory() as work:
        for dtype in ("float32", "float16"):
            for case in suite:
                name, op, T, N, I, H, opt = case
                if dtype == "float16" and (opt.get("peepholes") or opt.get("linear_before_reset") == 0):
                    continue  # cuDNN cannot run these: fp16 adds nothing
                if dtype == "float16" and not gpu:
                    continue
                path = os.path.join(work, f"{name}_{dtype}.onnx")
                w, x = make_model(case, dtype, path, rng)
                r = {"case": name, "dtype": dtype, "T": T, "N": N, "I": I, "H": H}
                plan = explain(args, path, providers)
                r["provider"] = next((l.split()[2] for l in plan.splitlines()
                                      if l.startswith(name + " ")), "?")
                # Correctness against PyTorch, where PyTorch computes the same thing.
                comparable = not opt.get("peepholes") and opt.get("linear_before_reset", 1) == 1
                if comparable:
                    m = torch_module(case, w, dtype, args.device)
                    want = torch_outputs(m, x, op, args.device)
                    got, err = recur_outputs(args, path, x, providers, work)
                    if err:
                        r["error"] = err
                    else:
                        r["max_abs_diff_vs_torch"] = max(
                            float(np.max(np.abs(got[k] - want[k]))) for k in want if k in got)
                # Timing, alternated.
                rec_dev, rec_host, tor = [], [], []
                for _ in range(3):
                    if gpu:
                        p = recur_perf(args, path, providers, True, args.warmup, args.repeat)
                        if "error" in p:
                            r["error"] = p["error"]
                            break
                        rec_dev.append(p["latency_ms"]["p50"])
                    p = recur_perf(args, path, providers, False, args.warmup, args.repeat)
                    if "error" in p:
                        r["error"] = p["error"]
                        break
                    rec_host.append(p["latency_ms"]["p50"])
                    if comparable:
                        tor.append(statistics.median(torch_time(m, x, args.device, args.warmup,
                                                                args.repeat)))
                if rec_dev:
                    r["recur_device_io_p50_ms"] = statistics.median(rec_dev)
                if rec_host:
                    r["recur_host_io_p50_ms"] = statistics.median(rec_host)
                if tor:
                    r["torch_p50_ms"] = statistics.median(tor)
                    if rec_dev:
                        r["torch_over_recur"] = r["torch_p50_ms"] / r["recur_device_io_p50_ms"]
                if gpu and dtype == "float32" and N <= 32:
                    ref, err = recur_outputs(args, path, x, "reference", work)
                    got, err2 = recur_outputs(args, path, x, providers, work)
                    if err or err2:
                        r["error"] = err or err2
                    else:
                        r["max_abs_diff_vs_reference"] = max(
                            float(np.max(np.abs(got[k] - ref[k]))) for k in ref if k in got)
                if gpu and dtype == "float32" and "cuda-generic" in built and r["provider"] == "cudnn":
                    gen = []
                    for _ in range(3):
                        p = recur_perf(args, path, "cuda-generic", True, args.warmup, args.repeat)
                        if "error" in p:
                            r["error"] = p["error"]
                            break
                        gen.append(p["latency_ms"]["p50"])
                    if gen:
                        r["cuda_generic_device_io_p50_ms"] = statistics.median(gen)
                if name in ("lstm_large", "lstm_peep", "gru_lbr0") and dtype == "float32":
                    if "onednn" in built:
                        p = recur_perf(args, path, "onednn,reference", False, 1, 5,
                                       threads=os.cpu_count() or 1)
                        r["recur_onednn_p50_ms"] = p.get("latency_ms", {}).get("p50")
                    try:
                        import onnxruntime as ort
                        so = ort.SessionOptions()
                        so.intra_op_num_threads = os.cpu_count() or 1
                        s = ort.InferenceSession(path, so, providers=["CPUExecutionProvider"])
                        s.run(None, {"X": x})
                        ts = []
                        for _ in range(5):
                            t0 = time.perf_counter()
                            s.run(None, {"X": x})
                            ts.append((time.perf_counter() - t0) * 1e3)
                        r["ort_cpu_p50_ms"] = statistics.median(ts)
                    except Exception as e:  # onnxruntime absent
                        r["ort_cpu"] = str(e)[:200]
                print(json.dumps(r), flush=True)
                results.append(r)
        if gpu:
            results += graphs_section(args, work, built, rng)
            results += models_section(args, work)
    meta = {"device": args.device, "torch": __import__("torch").__version__,
            "cudnn": __import__("torch").backends.cudnn.version() if gpu else None,
            "gpu": __import__("torch").cuda.get_device_name(0) if gpu else None,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    with open(os.path.join(args.out, "bench.json"), "w") as f:
        json.dump({"meta": meta, "results": results}, f, indent=1)
    cols = ["case", "dtype", "provider", "recur_device_io_p50_ms", "recur_host_io_p50_ms",
            "torch_p50_ms", "torch_over_recur", "max_abs_diff_vs_torch",
            "max_abs_diff_vs_reference", "cuda_generic_device_io_p50_ms", "recur_onednn_p50_ms",
            "ort_cpu_p50_ms", "graphs_off_p50_ms", "graphs_on_p50_ms", "persistent_p50_ms",
            "fusion_off_p50_ms",
            "fusion_on_p50_ms", "reference_cpu_p50_ms", "error"]
    with open(os.path.join(args.out, "bench.md"), "w") as f:
        f.write(f"{meta}\n\n| " + " | ".join(cols) + " |\n|" + "---|" * len(cols) + "\n")
        for r in results:
            cells = []
            for c in cols:
                v = r.get(c, "")
                cells.append(f"{v:.4g}" if isinstance(v, float) else str(v).replace("|", "/"))
            f.write("| " + " | ".join(cells) + " |\n")
    print(open(os.path.join(args.out, "bench.md")).read())
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
