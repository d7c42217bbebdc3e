#!/usr/bin/env python3
"""Where a GPU case's time goes: the kernels recur and PyTorch launch, and the cost of launching.

For each case of the standard suite named with --cases (gpu_bench.py's SUITE, as
name:dtype), on the lent GPU machine:
  - a kernel trace under Nsight Compute (ncu, --clock-control none --cache-control none, one
    metric: gpu__time_duration.sum): recur-run with --warmup 1 --repeat 1, and PyTorch's
    module called twice where PyTorch computes the same thing; written as
    trace-<case>-<dtype>-<who>.csv (one row per kernel: order, name, grid, block, ns);
  - launch cost: recur-run --perf --device-io with CUDA graphs off and on, alternated with
    PyTorch timed with CUDA events, plain and replayed from a CUDA graph (medians of --repeat
    after 5 warm-ups, three rounds), into profile.json.
ncu serializes kernels, so a trace's sum is the GPU's busy time, not the wall time; where the
wall time is well above it, the run is bound by launching (host) rather than by the kernels.
"""
import argparse
import csv
import io
import json
import os
import shutil
import subprocess
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_bench  # noqa: E402  (the suite, the models and PyTorch's modules)

TORCH_CHILD = r"""
import sys, numpy as np, torch
sys.path.insert(0, sys.argv[1])
import gpu_bench
case = [c for c in gpu_bench.SUITE if c[0] == sys.argv[2]][0]
w = dict(np.load(sys.argv[4]))
x = np.load(sys.argv[5])
torch.backends.cudnn.allow_tf32 = False
torch.backends.cuda.matmul.allow_tf32 = False
m = gpu_bench.torch_module(case, w, sys.argv[3], "cuda")
xt = torch.from_numpy(x).cuda()
with torch.inference_mode():
    for _ in range(2):
        m(xt)
torch.cuda.synchronize()
"""


def ncu_path():
    for c in (shutil.which("ncu"), "/usr/local/cuda/bin/ncu"):
        if c and os.path.exists(c):
            return c
    return None


def trace(ncu, cmd, env, path, timeout):
    """Runs cmd under ncu; writes the kernel rows to path; returns (rows, error)."""
    log = path + ".log"
    full = [ncu, "--clock-control", "none", "--cache-control", "none", "--csv", "--print-units",
            "base", "--metrics", "gpu__time_duration.sum", "--log-file", log] + cmd
    try:
        p = subprocess.run(full, capture_output=True, text=True, env=env, timeout=timeout)
    except subprocess.TimeoutExpired:
        return [], "ncu timed out"
    text = open(log).read() if os.path.exists(log) else ""
    lines = [l for l in text.splitlines() if l.startswith('"')]
    rows = []
    for r in csv.DictReader(io.StringIO("\n".join(lines))):
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        rows.append({"id": int(r["ID"]), "name": r["Kernel Name"][:160], "grid": r["Grid Size"],
                     "block": r["Block Size"], "ns": float(r["Metric Value"].replace(",", ""))})
    with open(path, "w", newline="") as f:
        wr = csv.DictWriter(f, fieldnames=["id", "name", "grid", "block", "ns"])
        wr.writeheader()
        wr.writerows(rows)
    err = None if p.returncode == 0 else (p.stderr or p.stdout)[-400:]
    return rows, err


def detail(args, ncu, env, model, tag, r):
    """A full ncu report of the first launch of the kernels matching args.detail, as text."""
    rep = os.path.join(args.out, f"detail-{tag}")
    cmd = [ncu, "--clock-control", "none", "-k", "regex:" + args.detail, "-c", "1", "--set",
           "full", "--import-source", "no", "-f", "-o", rep, args.recur, model, "--perf",
           "--providers", args.providers, "--device-io", "--random-inputs", "--warmup", "0",
           "--repeat", "1"]
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=args.ncu_timeout)
        r["detail_rc"] = p.returncode
        if p.returncode:
            r["detail_error"] = (p.stderr or p.stdout)[-400:]
    except subprocess.TimeoutExpired:
        r["detail_error"] = "ncu timed out"
        return
    for page, extra, out in (("details", ["--print-details", "all"], ".txt"),
                             ("source", ["--csv", "--print-source", "sass"], "-sass.csv")):
        with open(rep + out, "w") as f:
            subprocess.run([ncu, "-i", rep + ".ncu-rep", "--page", page] + extra, stdout=f,
                           stderr=subprocess.STDOUT, text=True, timeout=args.ncu_timeout)
    if os.path.exists(rep + ".ncu-rep"):
        os.remove(rep + ".ncu-rep")  # the text pages carry what is read here; keep $OUT small


def torch_graph_time(m, x, warmup, repeat):
    """PyTorch's forward replayed from a CUDA graph: its time without host launches."""
    import torch
    xt = torch.from_numpy(x).cuda()
    with torch.inference_mode():
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            for _ in range(3):
                m(xt)
        torch.cuda.current_stream().wait_stream(s)
        g = torch.cuda.CUDAGraph()
        with torch.cuda.graph(g):
            m(xt)
        ms = []
        for i in range(warmup + repeat):
            a = torch.cuda.Event(enable_timing=True)
            b = torch.cuda.Event(enable_timing=True)
            a.record()
            g.replay()
            b.record()
            b.synchronize()
            if i >= warmup:
                ms.append(a.elapsed_time(b))
    return ms


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--recur", required=True)
    ap.add_argument("--out", default="out")
    ap.add_argument("--cases", default="bilstm:float32,gru_lbr1:float16,lstm_peep:float32")
    ap.add_argument("--providers", default="cudnn,cuda-generic")
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--ncu-timeout", type=int, default=120)
    ap.add_argument("--quick", action="store_true",
                    help="only recur's device-IO latency (three rounds): no graphs, no PyTorch, "
                         "no traces; to compare two builds alternately")
    ap.add_argument("--detail", default="",
                    help="a kernel name regex: only a full ncu report (--set full, SASS with "
                         "its stall samples) of that kernel's first launch in each case's run")
    args = ap.parse_args()
    if not args.quick:  # the quick comparison needs no PyTorch (seconds of import)
        import torch
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    env = gpu_bench.recur_env(args)
    ncu = ncu_path()
    rng = np.random.default_rng(7)
    work = tempfile.mkdtemp()
    results = []
    res_path = os.path.join(args.out, "profile.json")
    for spec in args.cases.split(","):
        name, dtype = spec.split(":")
        case = next(c for c in gpu_bench.SUITE if c[0] == name)
        path = os.path.join(work, f"{name}_{dtype}.onnx")
        w, x = gpu_bench.make_model(case, dtype, path, rng)
        opt = case[6]
        comparable = not opt.get("peepholes") and opt.get("linear_before_reset", 1) == 1
        r = {"case": name, "dtype": dtype}
        args.gpu = True
        if args.quick:
            ms = []
            for _ in range(3):
                p = gpu_bench.recur_perf(args, path, args.providers, True, 5, args.repeat)
                if "error" in p:
                    r["error"] = p["error"]
                    break
                ms.append(p["latency_ms"]["p50"])
            r["recur_ms"] = gpu_bench.med(ms)
            print(json.dumps(r), flush=True)
            results.append(r)
            continue
        if args.detail:
            detail(args, ncu, env, path, f"{name}-{dtype}", r)
            print(json.dumps(r), flush=True)
            results.append(r)
            continue
        m = gpu_bench.torch_module(case, w, dtype, "cuda") if comparable else None
        rec, recg, tor, torg = [], [], [], []
        for _ in range(3):
            for extra, into in (((), rec), (("--cuda-graphs",), recg)):
                p = gpu_bench.recur_perf(args, path, args.providers, True, 5, args.repeat,
                                         extra=extra)
                if "error" in p:
                    r["error" + ("_graphs" if extra else "")] = p["error"]
                else:
                    into.append(p["latency_ms"]["p50"])
            if m is not None:
                tor.append(gpu_bench.med(gpu_bench.torch_time(m, x, "cuda", 5, args.repeat)))
                torg.append(gpu_bench.med(torch_graph_time(m, x, 5, args.repeat)))
        if dtype == "float32":
            # Each provider alone against the reference provider on the CPU, with the outputs'
            # sizes, to tell a true agreement from a comparison of one output with itself.
            ref, err = gpu_bench.recur_outputs(args, path, x, "reference", work)
            for prov in ("cudnn", "cuda-generic", "cudnn,reference",
                         "cudnn,cuda-generic,onednn,reference"):
                got, err2 = gpu_bench.recur_outputs(args, path, x, prov, work)
                if err or err2:
                    r["diff_error_" + prov] = err or err2
                    continue
                r["max_abs_diff_" + prov] = max(
                    float(np.max(np.abs(got[k] - ref[k]))) for k in ref if k in got)
                r["y_l2_" + prov] = float(np.linalg.norm(got["Y"]))
            if ref:
                r["y_l2_reference"] = float(np.linalg.norm(ref["Y"]))
        r.update(recur_ms=gpu_bench.med(rec), recur_graphs_ms=gpu_bench.med(recg),
                 torch_ms=gpu_bench.med(tor), torch_graph_ms=gpu_bench.med(torg))
        if ncu:
            tag = f"{name}-{dtype}"
            cmd = [args.recur, path, "--perf", "--providers", args.providers, "--device-io",
                   "--random-inputs", "--warmup", "1", "--repeat", "1"]
            rows, err = trace(ncu, cmd, env, os.path.join(args.out, f"trace-{tag}-recur.csv"),
                              args.ncu_timeout)
            r["recur_kernels"] = len(rows)
            if err:
                r["recur_trace_error"] = err
            if comparable:
                wp, xp = os.path.join(work, "w.npz"), os.path.join(work, "x.npy")
                np.savez(wp, **w)
                np.save(xp, x)
                here = os.path.dirname(os.path.abspath(__file__))
                cmd = [sys.executable, "-c", TORCH_CHILD, here, name, dtype, wp, xp]
                rows, err = trace(ncu, cmd, dict(os.environ),
                                  os.path.join(args.out, f"trace-{tag}-torch.csv"),
                                  args.ncu_timeout)
                r["torch_kernels"] = len(rows)
                if err:
                    r["torch_trace_error"] = err
        else:
            r["trace_error"] = "ncu not found"
        print(json.dumps(r), flush=True)
        results.append(r)
        with open(res_path, "w") as f:
            json.dump(results, f, indent=1)
    shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
