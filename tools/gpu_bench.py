#!/usr/bin/env python3
"""recur's GPU providers against PyTorch's cuDNN RNNs and the CPU (docs/benchmarking.md).

Sections (--sections, default all of them):
  suite    the standard suite: for each case the ONNX model (random weights, scale 0.1), the
           same weights in torch.nn.LSTM, GRU or RNN, and
           - correctness: recur's outputs vs PyTorch's on the same random input (max |diff|),
             and every case at N <= 32 against recur's reference provider (which covers the
             cases PyTorch cannot compute: peepholes, linear_before_reset=0);
           - speed: recur-run --perf with inputs and outputs on the GPU (--device-io) and with
             host inputs and outputs, vs PyTorch under inference_mode timed with CUDA events;
             alternated A B A B, medians;
           - recur's load time (session creation) and the device memory of both, each in its own
             process (NVML, the device's used memory sampled every 2 ms over its use before);
           fp32 with TF32 off on both sides, then fp16 for the cases cuDNN can run. lstm_large,
           lstm_peep and gru_lbr0 are also timed on recur's onednn provider (every core) and on
           ONNX Runtime's CPU provider: lstm_peep and gru_lbr0 are what cuDNN cannot run, so
           there recur's GPU path is cuda-generic, where ONNX Runtime's CUDA provider would fall
           back to the CPU. On cuDNN's cases, cuda-generic alone is timed too. cudnn keeps every
           node it can run here (--set cudnn.defer_to_grid=0); where the default plan leaves a
           node to cuda-generic's grid kernel instead, default_provider says so, and the
           cuda-generic column is the default plan's time.
  graphs   lstm_stream at batch 1: CUDA graphs off and on (recur-run --cuda-graphs) for cudnn and
           cuda-generic, alternated with PyTorch's batch-1 latency; cuda-generic's per-step
           launches (cuda-generic.persistent=0) beside its default grid kernel.
  models   the models in models/ with --providers cudnn,cuda-generic, stacked RNN fusion off and
           on, from their test_data_set_0 inputs, with the reference provider on the CPU.
  serving  the models in models/ at batch 1 and 64 (their inputs tiled along the batch axis;
           models with a fixed batch run at it): recur on the GPU (host inputs and outputs),
           recur's onednn on every core, and ONNX Runtime's CPU provider; load time and device
           memory.
Writes bench.json and bench.md under --out; bench.md ends with the issue's targets, each with
its measured ratio. `--device cpu` is a dry run of every section on a machine without a GPU:
CPU providers in place of the GPU ones, PyTorch on the CPU, small sizes.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "models")
SECTIONS = ("suite", "graphs", "models", "serving")

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


# PyTorch's module in a process of its own: argv is the tools folder, the case's name, the
# dtype, and the .npz of its weights and .npy of X (torch_child_args). TORCH_CHILD runs it twice
# (for a kernel trace); TORCH_TIME_CHILD times it as torch_time does, argv[6] runs after 5
# warm-ups, and prints their median in ms.
_TORCH_CHILD_SETUP = r"""
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import gpu_bench
case = [c for c in gpu_bench.SUITE if c[0] == sys.argv[2]][0]
w = dict(np.load(sys.argv[4]))
x = np.load(sys.argv[5])
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
m = gpu_bench.torch_module(case, w, sys.argv[3], "cuda")
"""
TORCH_CHILD = _TORCH_CHILD_SETUP + r"""
xt = torch.from_numpy(x).cuda()
with torch.inference_mode():
    for _ in range(2):
        m(xt)
torch.cuda.synchronize()
"""
TORCH_TIME_CHILD = _TORCH_CHILD_SETUP + r"""
print(gpu_bench.med(gpu_bench.torch_time(m, x, "cuda", 5, int(sys.argv[6]))))
"""


def torch_child_args(case, dtype, w, x, work, *extra):
    """The argv of TORCH_CHILD or TORCH_TIME_CHILD for this case, its files written to work."""
    wp, xp = os.path.join(work, "w.npz"), os.path.join(work, "x.npy")
    np.savez(wp, **w)
    np.save(xp, x)
    return [os.path.dirname(os.path.abspath(__file__)), case[0], dtype, wp, xp] + list(extra)


def torch_child_time(child_args):
    """PyTorch's median ms in a process of its own (as recur-run is timed), or None;
    child_args from torch_child_args with the number of timed runs."""
    p = subprocess.run([sys.executable, "-c", TORCH_TIME_CHILD] + child_args,
                       capture_output=True, text=True)
    return float(p.stdout.split()[-1]) if p.returncode == 0 and p.stdout.split() else None


def recur_env(args):
    env = dict(os.environ)
    extra = os.environ.get("RECUR_LD_LIBRARY_PATH", "")
    if extra:
        env["LD_LIBRARY_PATH"] = extra + (":" + env["LD_LIBRARY_PATH"] if env.get("LD_LIBRARY_PATH") else "")
    return env


def recur_perf(args, model, providers, device_io, warmup, repeat, threads=0, extra=(),
               inputs=None, memory=None):
    """recur-run --perf --json; with `memory` (a DeviceMemory), adds the device memory used."""
    cmd = [args.recur, model, "--perf", "--json", "--providers", providers,
           "--warmup", str(warmup), "--repeat", str(repeat)] + list(extra)
    if inputs:
        for name, path in inputs:
            cmd += ["--input", name + "=" + path]
    else:
        cmd.append("--random-inputs")
    if device_io and args.gpu:
        cmd.append("--device-io")
    if threads:
        cmd += ["--threads", str(threads)]
    p, mib = (memory or DeviceMemory.none).peak_during(cmd, recur_env(args))
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip()[-500:]}
    line = [l for l in p.stdout.splitlines() if l.startswith("{")][-1]
    r = json.loads(line)
    if mib is not None:
        r["device_mib"] = mib
    return r


def recur_outputs(args, model, x, providers, work, extra=()):
    xp = os.path.join(work, "x.npy")
    np.save(xp, x)
    od = os.path.join(work, "out_" + providers.replace(",", "_"))
    shutil.rmtree(od, ignore_errors=True)  # no outputs left from another case's model
    cmd = [args.recur, model, "--input", "X=" + xp, "--providers", providers, "--output-dir", od,
           "--overwrite"] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=recur_env(args))
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-500:]
    return {k: np.load(os.path.join(od, k + ".npy")).astype(np.float32)
            for k in ("Y", "Y_h", "Y_c") if os.path.exists(os.path.join(od, k + ".npy"))}, None


class DeviceMemory:
    """The device's used memory while a child process runs, over its use just before (NVML)."""
    none = None  # the disabled one, set below

    def __init__(self, enabled=True):
        self.handle = None
        self.why = "not measured"
        if not enabled:
            return
        try:
            import pynvml  # nvidia-ml-py
            pynvml.nvmlInit()
            self.nvml = pynvml
            self.handle = pynvml.nvmlDeviceGetHandleByIndex(0)
        except Exception as e:  # no NVML: no figure, and say why
            self.why = "NVML: " + str(e)[:200]

    def used(self):
        return self.nvml.nvmlDeviceGetMemoryInfo(self.handle).used

    def peak_during(self, cmd, env=None):
        """Runs cmd; returns (CompletedProcess, MiB over the use before it, or None)."""
        if self.handle is None:
            return subprocess.run(cmd, capture_output=True, text=True, env=env), None
        base = self.used()
        peak = [base]
        stop = threading.Event()

        def poll():
            while not stop.is_set():
                peak[0] = max(peak[0], self.used())
                stop.wait(0.002)

        t = threading.Thread(target=poll, daemon=True)
        t.start()
        try:
            p = subprocess.run(cmd, capture_output=True, text=True, env=env)
        finally:
            stop.set()
            t.join()
        return p, round((peak[0] - base) / 2**20, 1)


DeviceMemory.none = DeviceMemory(enabled=False)


def torch_child(spec_path):
    """In its own process: PyTorch's module for one case, three forward passes; prints its
    setup time, so that the parent can sample the device memory a PyTorch process uses."""
    import torch
    with open(spec_path) as f:
        spec = json.load(f)
    case = tuple(spec["case"])
    w = dict(np.load(spec["weights"]))
    t0 = time.perf_counter()
    m = torch_module(case, w, spec["dtype"], spec["device"])
    x = torch.from_numpy(np.load(spec["x"])).to(spec["device"])
    with torch.inference_mode():
        for _ in range(3):
            m(x)
    if spec["device"] == "cuda":
        torch.cuda.synchronize()
    print(json.dumps({"setup_and_3_runs_ms": (time.perf_counter() - t0) * 1e3}))


def torch_device_mib(args, mem, case, w, x, dtype, work):
    if mem.handle is None:
        return None
    wp, xp, sp = (os.path.join(work, "torch_child" + s) for s in (".npz", "_x.npy", ".json"))
    np.savez(wp, **w)
    np.save(xp, x)
    with open(sp, "w") as f:
        json.dump({"case": case, "weights": wp, "x": xp, "dtype": dtype,
                   "device": args.device}, f)
    p, mib = mem.peak_during([sys.executable, os.path.abspath(__file__), "--torch-child", sp])
    return mib if p.returncode == 0 else None


def ort_cpu(model, feeds, threads, warmup=1, repeat=5):
    """ONNX Runtime's CPU provider (the GPU machine's python onnxruntime): p50 and load."""
    try:
        import onnxruntime as ort
        so = ort.SessionOptions()
        so.intra_op_num_threads = threads
        t0 = time.perf_counter()
        s = ort.InferenceSession(model, so, providers=["CPUExecutionProvider"])
        load_ms = (time.perf_counter() - t0) * 1e3
        for _ in range(warmup):
            s.run(None, feeds)
        ts = []
        for _ in range(repeat):
            t0 = time.perf_counter()
            s.run(None, feeds)
            ts.append((time.perf_counter() - t0) * 1e3)
        return {"p50": statistics.median(ts), "load_ms": load_ms}
    except Exception as e:  # onnxruntime absent, or the model refused
        return {"error": str(e)[:200]}


def explain(args, model, providers, extra=()):
    p = subprocess.run([args.recur, model, "--explain", "--plan-only", "--providers", providers]
                       + list(extra), capture_output=True, text=True, env=recur_env(args))
    return p.stdout


def planned_provider(args, model, providers, node, extra=()):
    """The provider --explain names for `node`, or "?"."""
    plan = explain(args, model, providers, extra)
    return next((l.split()[2] for l in plan.splitlines() if l.startswith(node + " ")), "?")


def med(xs):
    return statistics.median(xs) if xs else None


def suite_section(args, work, built, rng, mem):
    gpu = args.gpu
    providers = args.providers
    cpu_threads = os.cpu_count() or 1
    keep = ["--set", "cudnn.defer_to_grid=0"] if "cudnn" in built else []
    out = []
    for dtype in args.dtypes.split(","):
        for case in args.suite:
            name, op, T, N, I, H, opt = case
            if dtype == "float16" and (opt.get("peepholes") or opt.get("linear_before_reset") == 0):
                continue  # cuDNN cannot run these: fp16 adds nothing
            if dtype == "float16" and not gpu:
                continue
            path = os.path.join(work, f"{name}_{dtype}.onnx")
            w, x = make_model(case, dtype, path, rng)
            r = {"case": name, "dtype": dtype, "T": T, "N": N, "I": I, "H": H}
            # The suite times cudnn against PyTorch, so cudnn keeps what it can run; where the
            # default plan leaves a node to cuda-generic's grid kernel, that is timed below
            # (cuda_generic_device_io_p50_ms) and named here.
            r["provider"] = planned_provider(args, path, providers, name, keep)
            default = planned_provider(args, path, providers, name)
            if default != r["provider"]:
                r["default_provider"] = default
            # Correctness against PyTorch, where PyTorch computes the same thing.
            comparable = not opt.get("peepholes") and opt.get("linear_before_reset", 1) == 1
            if comparable:
                m = torch_module(case, w, dtype, args.device)
                want = torch_outputs(m, x, op, args.device)
                got, err = recur_outputs(args, path, x, providers, work, keep)
                if err:
                    r["error"] = err
                else:
                    r["max_abs_diff_vs_torch"] = max(
                        float(np.max(np.abs(got[k] - want[k]))) for k in want if k in got)
            # Timing, alternated.
            rec_dev, rec_host, tor, tor_child, load = [], [], [], [], []
            child = (torch_child_args(case, dtype, w, x, work, str(args.repeat))
                     if comparable and gpu else None)
            for _ in range(3):
                for device_io, into in ((True, rec_dev), (False, rec_host)):
                    if device_io and not gpu:
                        continue
                    p = recur_perf(args, path, providers, device_io, args.warmup, args.repeat,
                                   extra=keep)
                    if "error" in p:
                        r["error"] = p["error"]
                        break
                    into.append(p["latency_ms"]["p50"])
                    load.append(p["load_ms"])
                if "error" in r:
                    break
                if comparable:
                    tor.append(med(torch_time(m, x, args.device, args.warmup, args.repeat)))
                    if child:  # PyTorch's launch rate moves with its process: one of its own too
                        t = torch_child_time(child)
                        if t is not None:
                            tor_child.append(t)
            r["recur_device_io_p50_ms"] = med(rec_dev)
            r["recur_host_io_p50_ms"] = med(rec_host)
            r["recur_load_ms"] = med(load)
            r["torch_p50_ms"] = med(tor)
            if tor and rec_dev:
                r["torch_over_recur"] = r["torch_p50_ms"] / r["recur_device_io_p50_ms"]
            if tor_child and rec_dev:
                r["torch_child_p50_ms"] = med(tor_child)
                r["torch_child_over_recur"] = r["torch_child_p50_ms"] / r["recur_device_io_p50_ms"]
            if mem.handle is not None:
                p = recur_perf(args, path, providers, True, 1, 3, extra=keep, memory=mem)
                r["recur_device_mib"] = p.get("device_mib")
                if comparable:
                    r["torch_device_mib"] = torch_device_mib(args, mem, case, w, x, dtype, work)
            if dtype == "float32" and N <= 32:
                ref, err = recur_outputs(args, path, x, "reference", work)
                got, err2 = recur_outputs(args, path, x, providers, work, keep)
                if err or err2:
                    r["error"] = err or err2
                else:
                    r["max_abs_diff_vs_reference"] = max(
                        float(np.max(np.abs(got[k] - ref[k]))) for k in ref if k in got)
                    # Both sides' sizes, so that a difference of 0 can be told from a mix-up.
                    r["y_l2_reference"] = float(np.linalg.norm(ref["Y"]))
                    r["y_l2_gpu"] = float(np.linalg.norm(got["Y"]))
            if gpu and dtype == "float32" and "cuda-generic" in built and r["provider"] == "cudnn":
                gen = []
                for _ in range(3):
                    p = recur_perf(args, path, "cuda-generic", True, args.warmup, args.repeat)
                    if "error" in p:
                        r["error"] = p["error"]
                        break
                    gen.append(p["latency_ms"]["p50"])
                r["cuda_generic_device_io_p50_ms"] = med(gen)
            if gpu and r["provider"] == "cuda-generic" and "error" not in r:
                # What cuda-generic gives with its launches recorded as a CUDA graph.
                gr = []
                for _ in range(3):
                    p = recur_perf(args, path, providers, True, args.warmup, args.repeat,
                                   extra=["--cuda-graphs"])
                    if "error" in p:
                        r["graphs_error"] = p["error"]
                        break
                    gr.append(p["latency_ms"]["p50"])
                r["recur_graphs_device_io_p50_ms"] = med(gr)
                # The launches per step that the grid kernel replaces, for the record.
                ps = recur_perf(args, path, providers, True, args.warmup, args.repeat,
                                extra=["--set", "cuda-generic.persistent=0"])
                r["per_step_device_io_p50_ms"] = ps.get("latency_ms", {}).get("p50")
            if name in ("lstm_large", "lstm_peep", "gru_lbr0") and dtype == "float32":
                if "onednn" in built:
                    p = recur_perf(args, path, "onednn,reference", False, 1, 5,
                                   threads=cpu_threads)
                    r["recur_onednn_p50_ms"] = p.get("latency_ms", {}).get("p50")
                    if r["recur_onednn_p50_ms"] and rec_host:
                        r["onednn_over_gpu_host_io"] = (r["recur_onednn_p50_ms"]
                                                        / r["recur_host_io_p50_ms"])
                    if r["recur_onednn_p50_ms"] and rec_dev:
                        r["onednn_over_gpu_device_io"] = (r["recur_onednn_p50_ms"]
                                                          / r["recur_device_io_p50_ms"])
                    if r["recur_onednn_p50_ms"] and r.get("recur_graphs_device_io_p50_ms"):
                        r["onednn_over_gpu_graphs"] = (r["recur_onednn_p50_ms"]
                                                       / r["recur_graphs_device_io_p50_ms"])
                o = ort_cpu(path, {"X": x}, cpu_threads)
                r["ort_cpu_p50_ms"] = o.get("p50")
                if "error" in o:
                    r["ort_cpu"] = o["error"]
            args.emit(r)
            out.append(r)
    return out


def graphs_section(args, work, built, rng, mem):
    """lstm_stream at batch 1: CUDA graphs off and on, alternated with PyTorch's latency."""
    out = []
    case = next(c for c in args.suite if c[0] == "lstm_stream")
    path = os.path.join(work, "lstm_stream_graphs.onnx")
    w, x = make_model(case, "float32", path, rng)
    m = torch_module(case, w, "float32", args.device)
    graphs = ["--cuda-graphs"] if args.gpu else []  # the dry run has no recording
    for providers in ("cudnn", "cuda-generic") if args.gpu else ("reference",):
        if providers not in built:
            continue
        r = {"case": "lstm_stream graphs", "dtype": "float32", "provider": providers}
        off, on, tor = [], [], []
        for _ in range(5):
            a = recur_perf(args, path, providers, True, args.warmup, args.repeat)
            b = recur_perf(args, path, providers, True, args.warmup, args.repeat, extra=graphs)
            if "error" in a or "error" in b:
                r["error"] = a.get("error") or b.get("error")
                break
            off.append(a["latency_ms"]["p50"])
            on.append(b["latency_ms"]["p50"])
            tor.append(med(torch_time(m, x, args.device, args.warmup, args.repeat)))
        r["graphs_off_p50_ms"] = med(off)
        r["graphs_on_p50_ms"] = med(on)
        r["torch_p50_ms"] = med(tor)
        if on and tor:
            r["torch_over_graphs_on"] = r["torch_p50_ms"] / r["graphs_on_p50_ms"]
        if providers == "cuda-generic" and "error" not in r:
            # A GEMM and a gate launch per step, against the default grid kernel (one launch).
            pers = []
            for _ in range(5):
                c = recur_perf(args, path, providers, True, args.warmup, args.repeat,
                               extra=["--set", "cuda-generic.persistent=0"])
                if "error" in c:
                    r["error"] = c["error"]
                    break
                pers.append(c["latency_ms"]["p50"])
            r["per_step_p50_ms"] = med(pers)
        args.emit(r)
        out.append(r)
    return out


BATCH_SYMBOLS = ("batch", "batch_size", "N")


def model_inputs(name, work, batch=None):
    """models/NAME/test_data_set_0's inputs as .npy files, tiled or cut to `batch` along every
    input's batch axis (a dimension named in BATCH_SYMBOLS). Returns (inputs as (name, path),
    feeds by name, the batch they have: None where no input has a batch axis)."""
    graph = onnx.load(os.path.join(MODELS, name, "model.onnx"), load_external_data=False).graph
    inits = {i.name for i in graph.initializer}
    infos = [i for i in graph.input if i.name not in inits]
    ds = os.path.join(MODELS, name, "test_data_set_0")
    inputs, feeds, has_batch = [], {}, False
    for k, info in enumerate(infos):
        f = os.path.join(ds, f"input_{k}.pb")
        if not os.path.exists(f):
            break
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        a = numpy_helper.to_array(t)
        axes = [d for d, dim in enumerate(info.type.tensor_type.shape.dim)
                if dim.dim_param in BATCH_SYMBOLS]
        if axes:
            has_batch = True
            if batch is not None:
                a = np.take(a, np.arange(batch) % a.shape[axes[0]], axis=axes[0])
        key = t.name or info.name
        p = os.path.join(work, f"{name}_b{batch}_in{k}.npy")
        np.save(p, a)
        inputs.append((key, p))
        feeds[key] = a
    return inputs, feeds, (batch if has_batch else None)


def model_names():
    return sorted(n for n in os.listdir(MODELS)
                  if os.path.exists(os.path.join(MODELS, n, "model.onnx"))
                  and os.path.isdir(os.path.join(MODELS, n, "test_data_set_0")))


def gpu_providers_for(args, model):
    """The GPU providers alone where they place every node; else with the reference provider
    behind them (control flow, ConvTranspose), and a note saying so."""
    if not args.gpu:
        return args.gpu_providers, None
    p = subprocess.run([args.recur, model, "--plan-only", "--providers", args.gpu_providers],
                       capture_output=True, text=True, env=recur_env(args))
    if p.returncode == 0:
        return args.gpu_providers, None
    return args.gpu_providers + ",reference", "some nodes on the CPU (reference)"


def models_section(args, work, built, rng, mem):
    """models/ with the GPU providers only, fusion off and on, and the reference on the CPU."""
    out = []
    for name in model_names():
        model = os.path.join(MODELS, name, "model.onnx")
        inputs, _, _ = model_inputs(name, work)
        gpu_providers, placement = gpu_providers_for(args, model)
        r = {"case": "model " + name, "dtype": "float32", "provider": gpu_providers,
             "placement": placement}
        off, on, ref, load = [], [], [], []
        for _ in range(3):
            a = recur_perf(args, model, gpu_providers, False, args.warmup, args.repeat,
                           extra=["--fusion", "off"], inputs=inputs)
            b = recur_perf(args, model, gpu_providers, False, args.warmup, args.repeat,
                           extra=["--fusion", "on"], inputs=inputs)
            c = recur_perf(args, model, "reference", False, 1, 5, inputs=inputs)
            if "error" in a or "error" in b:
                r["error"] = a.get("error") or b.get("error")
                break
            off.append(a["latency_ms"]["p50"])
            on.append(b["latency_ms"]["p50"])
            load.append(b["load_ms"])
            if "latency_ms" in c:
                ref.append(c["latency_ms"]["p50"])
        r["fusion_off_p50_ms"] = med(off)
        r["fusion_on_p50_ms"] = med(on)
        r["recur_load_ms"] = med(load)
        r["reference_cpu_p50_ms"] = med(ref)
        args.emit(r)
        out.append(r)
    return out


def serving_section(args, work, built, rng, mem):
    """Each model at batch 1 and 64: recur on the GPU, recur's onednn and ONNX Runtime on
    every core, alternated; recur's load time and device memory on the GPU."""
    out = []
    cpu_threads = os.cpu_count() or 1
    for name in model_names():
        model = os.path.join(MODELS, name, "model.onnx")
        gpu_providers, placement = gpu_providers_for(args, model)
        for batch in (1, 64):
            inputs, feeds, got = model_inputs(name, work, batch)
            if got is None and batch != 1:
                continue  # a fixed batch: one row, at the model's own batch
            r = {"case": "serve " + name, "batch": got if got is not None else "fixed",
                 "provider": gpu_providers, "placement": placement}
            g, c, o, load = [], [], [], []
            for _ in range(3):
                a = recur_perf(args, model, gpu_providers, False, args.warmup,
                               args.repeat, inputs=inputs)
                if "error" in a:
                    r["error"] = a["error"]
                    break
                g.append(a["latency_ms"]["p50"])
                load.append(a["load_ms"])
                if "onednn" in built:
                    b = recur_perf(args, model, "onednn,reference", False, args.warmup,
                                   args.repeat, threads=cpu_threads, inputs=inputs)
                    if "latency_ms" in b:
                        c.append(b["latency_ms"]["p50"])
                e = ort_cpu(model, feeds, cpu_threads, args.warmup, args.repeat)
                if "p50" in e:
                    o.append(e["p50"])
                else:
                    r["ort_cpu"] = e["error"]
            r["gpu_p50_ms"] = med(g)
            r["recur_load_ms"] = med(load)
            r["onednn_p50_ms"] = med(c)
            r["ort_cpu_p50_ms"] = med(o)
            if g and c:
                r["onednn_over_gpu"] = r["onednn_p50_ms"] / r["gpu_p50_ms"]
            if g and o:
                r["ort_cpu_over_gpu"] = r["ort_cpu_p50_ms"] / r["gpu_p50_ms"]
            if mem.handle is not None and "error" not in r:
                p = recur_perf(args, model, gpu_providers, False, 1, 3, inputs=inputs,
                               memory=mem)
                r["recur_device_mib"] = p.get("device_mib")
            args.emit(r)
            out.append(r)
    return out


def targets(results):
    """The issue's targets, each with the measured ratio: (target, case, value, met)."""
    rows = []
    for r in results:
        case = r["case"]
        if r.get("section") == "suite" and r.get("provider") == "cudnn" \
                and r.get("torch_over_recur") is not None:
            need = 0.95 if r["dtype"] == "float32" else 1.0
            rows.append((f"cudnn {r['dtype']} >= {need}x PyTorch (device IO)", case,
                         r["torch_over_recur"], r["torch_over_recur"] >= need))
            if r.get("torch_child_over_recur") is not None:
                rows.append((f"cudnn {r['dtype']} >= {need}x PyTorch in a process of its own",
                             case, r["torch_child_over_recur"],
                             r["torch_child_over_recur"] >= need))
        if r.get("section") == "suite" and case in ("lstm_peep", "gru_lbr0"):
            for k in ("onednn_over_gpu_host_io", "onednn_over_gpu_device_io",
                      "onednn_over_gpu_graphs"):
                if r.get(k) is not None:
                    rows.append((f"{r['provider']} >= 10x onednn ({k[16:].replace('_', ' ')})",
                                 case, r[k], r[k] >= 10))
        if r.get("section") == "graphs" and r.get("torch_over_graphs_on") is not None:
            rows.append((f"{r['provider']} with CUDA graphs faster than PyTorch at batch 1",
                         case, r["torch_over_graphs_on"], r["torch_over_graphs_on"] > 1.0))
    return rows


def fmt(v):
    return f"{v:.4g}" if isinstance(v, float) else str(v).replace("|", "/")


def write_markdown(path, meta, results):
    with open(path, "w") as f:
        f.write("```\n" + json.dumps(meta, indent=1) + "\n```\n")
        for section in SECTIONS:
            rows = [r for r in results if r.get("section") == section]
            if not rows:
                continue
            cols = []
            for r in rows:
                cols += [k for k in r if k not in cols and k != "section"]
            f.write(f"\n## {section}\n\n| " + " | ".join(cols) + " |\n|"
                    + "---|" * len(cols) + "\n")
            for r in rows:
                f.write("| " + " | ".join(fmt(r.get(c, "")) if r.get(c) is not None else ""
                                          for c in cols) + " |\n")
        t = targets(results)
        if t:
            f.write("\n## targets\n\n| target | case | measured | met |\n|---|---|---|---|\n")
            for name, case, value, met in t:
                f.write(f"| {name} | {case} | {value:.3f}x | {'yes' if met else 'NO'} |\n")


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--torch-child":
        return torch_child(sys.argv[2])
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recur", required=True, help="path to recur-run")
    ap.add_argument("--out", default="out")
    ap.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--repeat", type=int, default=30)
    ap.add_argument("--cases", default="", help="comma-separated subset of the suite")
    ap.add_argument("--dtypes", default="float32,float16",
                    help="the suite's element types, comma-separated")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help="comma-separated, of: " + ", ".join(SECTIONS))
    args = ap.parse_args()
    sections = args.sections.split(",")
    unknown = set(sections) - set(SECTIONS)
    if unknown:
        ap.error("unknown sections: " + ", ".join(sorted(unknown)))
    os.makedirs(args.out, exist_ok=True)
    import torch
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cuda.matmul.allow_tf32 = False
    args.gpu = gpu = args.device == "cuda"
    args.suite = SUITE
    if not gpu:  # dry run: small sizes, CPU providers, PyTorch on the CPU
        args.suite = [(n, op, 5, 2, 8, 16, o) for (n, op, T, N, I, H, o) in SUITE]
        args.warmup, args.repeat = 1, 3
    if args.cases:  # in the order given: a run cut short keeps the first ones
        args.suite = [c for name in args.cases.split(",") for c in args.suite if c[0] == name]
    avail = subprocess.run([args.recur, "--list-providers"], capture_output=True, text=True,
                           env=recur_env(args)).stdout
    built = [l.split(":")[0] for l in avail.splitlines() if l.endswith(": available")]
    wanted = "cudnn,cuda-generic,onednn,reference" if gpu else "reference"
    providers = ",".join(p for p in wanted.split(",") if p in built)
    args.providers = providers
    # Where the GPU path is measured: the suite lets recur fall back to the CPU (the plan says
    # where each case ran); models and serving list only the GPU providers.
    args.gpu_providers = "cudnn,cuda-generic" if gpu else "reference"
    mem = DeviceMemory(enabled=gpu)
    rng = np.random.default_rng(20261121)
    run = {"suite": suite_section, "graphs": graphs_section, "models": models_section,
           "serving": serving_section}
    results = []
    meta = {"device": args.device, "torch": torch.__version__,
            "cudnn": torch.backends.cudnn.version() if gpu else None,
            "gpu": torch.cuda.get_device_name(0) if gpu else None,
            "providers": built, "sections": sections, "cpu_threads": os.cpu_count(),
            "device_memory": "NVML" if mem.handle is not None else mem.why,
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}

    def save():
        with open(os.path.join(args.out, "bench.json"), "w") as f:
            json.dump({"meta": meta, "results": results}, f, indent=1)
        write_markdown(os.path.join(args.out, "bench.md"), meta, results)

    # Each row is saved as it comes: a run cut short by its time limit keeps what it measured.
    def emit(row):
        print(json.dumps(row), flush=True)
        results.append({"section": section, **row})
        save()

    args.emit = emit
    with tempfile.TemporaryDirectory() as work:
        for section in sections:  # in the order asked for
            run[section](args, work, built, rng, mem)
    save()
    print(open(os.path.join(args.out, "bench.md")).read())
    return 1 if any("error" in r for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
