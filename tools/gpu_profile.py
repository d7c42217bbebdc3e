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
--variants instead times recur-run with each named set of extra flags (e.g.
'plain=;persist=--set cudnn.persistent=on;graphs=--cuda-graphs'), alternated with PyTorch timed
in this process and in a child process of its own (as recur-run is), with each variant's CPU
time over its wall time (a spinning thread shows as more than one core) and its outputs against
the reference provider; with nsys on the machine, also the CUDA API summary of recur-run and of
the PyTorch child (the host's cost of each launch).
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

def tool_path(name):
    for c in (shutil.which(name), "/usr/local/cuda/bin/" + name):
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


def recur_run_outputs(args, model, x, providers, extra, work):
    """recur_outputs with extra flags (a provider setting, say)."""
    xp, od = os.path.join(work, "x.npy"), os.path.join(work, "out_variant")
    np.save(xp, x)
    shutil.rmtree(od, ignore_errors=True)
    cmd = [args.recur, model, "--input", "X=" + xp, "--providers", providers, "--output-dir", od,
           "--overwrite"] + list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True, env=gpu_bench.recur_env(args))
    if p.returncode != 0:
        return None, (p.stderr or p.stdout).strip()[-400:]
    return {k: np.load(os.path.join(od, k + ".npy")).astype(np.float64)
            for k in ("Y", "Y_h", "Y_c") if os.path.exists(os.path.join(od, k + ".npy"))}, None


def cpu_per_wall(fn):
    """fn's result, with the CPU time its child processes took over the wall time it took."""
    import resource
    import time
    r0, t0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    out = fn()
    r1, t1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
    cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
    return out, cpu / max(t1 - t0, 1e-9)


def nsys_api_summary(nsys, cmd, env, path, timeout):
    """The CUDA API summary (calls, total and average ns of each) of cmd under nsys, as text."""
    rep = path + "-rep"
    try:
        subprocess.run([nsys, "profile", "-t", "cuda", "-s", "none", "--cpuctxsw", "none", "-f",
                        "true", "-o", rep] + cmd, capture_output=True, text=True, env=env,
                       timeout=timeout)
        p = subprocess.run([nsys, "stats", "-r", "cuda_api_sum", "-f", "csv", rep + ".nsys-rep"],
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "nsys timed out"
    with open(path, "w") as f:
        f.write(p.stdout + p.stderr[-2000:])
    for ext in (".nsys-rep", ".sqlite"):
        if os.path.exists(rep + ext):
            os.remove(rep + ext)
    return None


def variants(args, case, dtype, path, w, x, m, work, env):
    """--variants: recur-run with each set of flags against PyTorch, alternated."""
    named = [v.split("=", 1) for v in args.variants.split(";") if v]

    def split(flags):  # a variant's own --providers replaces --providers
        f = flags.split()
        if "--providers" in f:
            i = f.index("--providers")
            return f[i + 1], f[:i] + f[i + 2:]
        return args.providers, f

    ms = {n: [] for n, _ in named}
    load = {n: [] for n, _ in named}
    cpu = {n: [] for n, _ in named}
    tput = {n: [] for n, _ in named}
    tor, tor_child = [], []
    child = gpu_bench.torch_child_args(case, dtype, w, x, work, str(args.repeat))
    r = {}
    for _ in range(args.rounds):
        for n, flags in named:
            prov, extra = split(flags)
            p, c = cpu_per_wall(lambda: gpu_bench.recur_perf(
                args, path, prov, True, 5, args.repeat, extra=extra))
            if "error" in p:
                r["error_" + n] = p["error"]
                continue
            ms[n].append(p["latency_ms"]["p50"])
            tput[n].append(p.get("throughput_per_s") or 0.0)
            load[n].append(p["load_ms"])
            cpu[n].append(c)
        if m is not None:
            tor.append(gpu_bench.med(gpu_bench.torch_time(m, x, "cuda", 5, args.repeat)))
            t = gpu_bench.torch_child_time(child)
            if t is None:
                r["torch_child_error"] = "PyTorch's child process failed"
            else:
                tor_child.append(t)
    for n, _ in named:
        r[n + "_ms"] = gpu_bench.med(ms[n])
        r[n + "_load_ms"] = gpu_bench.med(load[n])
        r[n + "_cpu_per_wall"] = gpu_bench.med(cpu[n])
        r[n + "_runs_per_s"] = gpu_bench.med(tput[n])
    r.update(torch_ms=gpu_bench.med(tor), torch_child_ms=gpu_bench.med(tor_child))
    # Each round's ratio as well: PyTorch's launch rate moves between processes and minutes.
    r["torch_rounds_ms"], r["torch_child_rounds_ms"] = tor, tor_child
    for n, _ in named:
        r[n + "_rounds_ms"] = ms[n]
    for n, flags in named:  # which algorithm each took (cudnn's notes)
        prov, extra = split(flags)
        p = subprocess.run([args.recur, path, "--explain", "--random-inputs", "--providers", prov]
                           + extra, capture_output=True, text=True, env=env)
        with open(os.path.join(args.out, f"explain-{case[0]}-{dtype}-{n}.txt"), "w") as f:
            f.write(p.stdout + p.stderr)
    ref, err = gpu_bench.recur_outputs(args, path, x, "reference", work)
    for n, flags in named:
        prov, extra = split(flags)
        if "--concurrency" in extra:
            continue  # the same outputs as the variant without it
        got, err2 = recur_run_outputs(args, path, x, prov, extra, work)
        if err or err2:
            r["diff_error_" + n] = err or err2
            continue
        r["max_abs_diff_" + n] = max(float(np.max(np.abs(got[k] - ref[k]))) for k in ref
                                     if k in got)
        r["max_rel_diff_" + n] = max(float(np.max(np.abs(got[k] - ref[k]) /
                                               (np.abs(ref[k]) + 1e-3))) for k in ref if k in got)
    nsys = tool_path("nsys")
    r["nsys"] = nsys or "not found"
    if nsys:
        tag = f"{case[0]}-{dtype}"
        cmd = [args.recur, path, "--perf", "--providers", args.providers, "--device-io",
               "--random-inputs", "--warmup", "5", "--repeat", str(args.repeat)]
        r["nsys_recur"] = nsys_api_summary(nsys, cmd, env, os.path.join(
            args.out, f"api-{tag}-recur.csv"), args.ncu_timeout)
        if m is not None:
            cmd = [sys.executable, "-c", gpu_bench.TORCH_TIME_CHILD] + child
            r["nsys_torch"] = nsys_api_summary(nsys, cmd, dict(os.environ), os.path.join(
                args.out, f"api-{tag}-torch.csv"), args.ncu_timeout)
    return r


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
    ap.add_argument("--variants", default="",
                    help="'name=flags;name=flags': recur-run with each set of extra flags against "
                         "PyTorch in this process and in a child, CPU per wall, parity, nsys")
    ap.add_argument("--rounds", type=int, default=3, help="--variants: rounds of alternation")
    args = ap.parse_args()
    if not args.quick:  # the quick comparison needs no PyTorch (seconds of import)
        import torch
        torch.backends.cudnn.allow_tf32 = False
        torch.backends.cuda.matmul.allow_tf32 = False
    os.makedirs(args.out, exist_ok=True)
    env = gpu_bench.recur_env(args)
    ncu = tool_path("ncu")
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
        if args.variants:
            m = gpu_bench.torch_module(case, w, dtype, "cuda") if comparable else None
            r.update(variants(args, case, dtype, path, w, x, m, work, env))
            print(json.dumps(r), flush=True)
            results.append(r)
            with open(res_path, "w") as f:
                json.dump(results, f, indent=1)
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
                cmd = [sys.executable, "-c", gpu_bench.TORCH_CHILD] + gpu_bench.torch_child_args(
                    case, dtype, w, x, work)
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
