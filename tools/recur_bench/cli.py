"""recur-bench: which runtime and provider is fastest on a model, by how much, and where each
becomes the fastest as batch and sequence length grow.

  recur-bench MODEL.onnx|DIR ... | --suite standard|models|all  [options]

Runs the model on every available recur provider (reference, onednn, cudnn, cuda-generic) and
on the peers that are present (ONNX Runtime CPU through onnxruntime-node, or the Python
onnxruntime module where there is no Node; PyTorch on a GPU machine, for single-node LSTM/GRU/RNN
models), each block of runs in its own child process (so that its peak memory and session load
time are its own), alternating engines in rounds, after warm-up. Prints medians, p90, minimum,
the ratio to a baseline, load time and peak memory; --json, --markdown and --plot write the
figures, a Markdown table and a chart.

Examples:
  tools/recur-bench --suite standard --plot out.png --json out.json
  tools/recur-bench models/char_lstm_lm --sweep batch=1,4,16,64 seq=10,100 --plot sweep.png
  tools/recur-bench models/dynamic_lstm --sweep batch=1,4 --dry-run     # the plan, no timing
  tools/recur-bench --from-json out.json --plot out.png                  # redraw, no timing
"""
import argparse
import atexit
import json
import math
import os
import shutil
import sys
import tempfile

from . import engines as eng
from . import env as envmod
from . import progress as prog
from . import report
from . import stats
from . import workload
from .workload import BenchError

ROOT = workload.ROOT
DISPLAY_ORDER = ["reference", "onednn", "cudnn", "cuda-generic"]


def parse_args(argv):
    ap = argparse.ArgumentParser(prog="recur-bench", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*", help="MODEL.onnx files or folders with model.onnx "
                    "(and test_data_set_0, whose inputs are used)")
    ap.add_argument("--suite", action="append", default=[],
                    help="standard (docs/benchmarking.md's single-node cases), models (models/*), all")
    ap.add_argument("--sweep", nargs="+", metavar="KEY=V1,V2",
                    help="batch=..., seq=... (or a symbolic dimension's own name): time every "
                    "combination; values a fixed dimension cannot take are skipped")
    ap.add_argument("--providers", default="reference,onednn,cudnn,cuda-generic",
                    help="recur providers to time (default: all; unavailable ones are listed)")
    ap.add_argument("--precision", default="fp32",
                    help="CPU precisions of the recur rows, e.g. fp32,bf16,int8: each one other "
                    "than fp32 adds a row per provider that takes it (onednn@bf16); peers stay fp32")
    ap.add_argument("--peers", default="onnxruntime,pytorch",
                    help="peer runtimes: onnxruntime, pytorch, or none")
    ap.add_argument("--baseline", default=None,
                    help="engine for the ratio column (default: onnxruntime when present, "
                    "else the first recur provider timed)")
    ap.add_argument("--threads", default=None,
                    help="comma-separated intra-op thread counts, the same for every engine "
                    "(default: 1,2 capped at the CPU count)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds (blocks) per "
                    "engine (default 3)")
    ap.add_argument("--warmup", type=int, default=2, help="warm-up runs per block (default 2)")
    ap.add_argument("--min-runs", type=int, default=20,
                    help="timed runs per engine and case, pooled over the rounds (default 20)")
    ap.add_argument("--budget", type=float, default=30.0,
                    help="seconds of run time per engine and case before fewer runs are "
                    "taken (slow engines such as the reference provider; default 30)")
    ap.add_argument("--timeout", type=int, default=900, help="seconds per child process")
    ap.add_argument("--json", metavar="FILE", help="write every figure, with the machine, CPU, "
                    "GPU, commit and date")
    ap.add_argument("--markdown", metavar="FILE", help="write the table as Markdown")
    ap.add_argument("--plot", metavar="FILE.png", help="bar chart (single runs) or line charts "
                    "(sweeps)")
    ap.add_argument("--profile", metavar="DIR", help="after timing each case, run each recur "
                    "engine once more with recur-run --profile and keep the Chrome trace in DIR "
                    "(named CASE.ENGINE.tTHREADS.trace.json); the result entry names it. The "
                    "timed runs are never profiled")
    ap.add_argument("--dry-run", "--list", dest="dry_run", action="store_true",
                    help="print the plan (engines with availability, cases, sweep points and "
                    "skips, unsupported nodes) and time nothing")
    ap.add_argument("--from-json", metavar="FILE", help="print and plot an earlier --json "
                    "result instead of measuring")
    ap.add_argument("--recur-run", default=None, help="recur-run binary (default: beside this "
                    "script's build, $RECUR_RUN, or build/tools/recur-run)")
    ap.add_argument("--suite-dir", default=os.path.join(workload.CACHE, "suite"))
    ap.add_argument("--ort-dir", default=os.path.join(workload.CACHE, "ort"),
                    help="where onnxruntime-node is installed (npm, on first use)")
    ap.add_argument("--no-install", action="store_true", help="never run npm")
    ap.add_argument("--python", default=sys.executable,
                    help="Python for the PyTorch and Python onnxruntime drivers")
    ap.add_argument("--torch-device", default="cuda", choices=["cuda", "cpu"])
    ap.add_argument("--int-range", action="append", default=[], metavar="NAME=LO:HI",
                    help="range (both ends included) of random integers for an input")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--progress", choices=["auto", "always", "never"], default="auto",
                    help="the progress bar on stderr (auto: only when stderr is a terminal)")
    a = ap.parse_args(argv)
    # `--sweep batch=1,4 MODEL`: nargs='+' takes the model too; give it back.
    if a.sweep:
        a.models += [x for x in a.sweep if "=" not in x]
        a.sweep = [x for x in a.sweep if "=" in x]
    if a.rounds < 1 or a.warmup < 0 or a.min_runs < 1 or a.budget <= 0:
        ap.error("--rounds and --min-runs must be >= 1, --warmup >= 0, --budget > 0")
    return a


def find_recur_run(arg):
    if arg:
        return arg
    if os.environ.get("RECUR_RUN"):
        return os.environ["RECUR_RUN"]
    # build/tools/recur-bench (a symlink made by CMake) runs the recur-run beside it.
    here = os.path.dirname(os.path.abspath(sys.argv[0]))
    if os.path.exists(os.path.join(here, "recur-run")):
        return os.path.join(here, "recur-run")
    return os.path.join(ROOT, "build", "tools", "recur-run")


def parse_threads(text):
    if text is None:
        cpus = os.cpu_count() or 1
        return [1, 2] if cpus >= 2 else [1]
    try:
        out = [int(t) for t in text.split(",") if t.strip()]
    except ValueError:
        raise BenchError("--threads takes numbers, e.g. 1,2") from None
    if not out or min(out) < 1:
        raise BenchError("--threads takes counts >= 1")
    return out


def parse_int_ranges(items):
    out = {}
    for item in items:
        name, eq, rng = item.partition("=")
        lo, colon, hi = rng.partition(":")
        try:
            if not eq or not colon:
                raise ValueError
            out[name] = (int(lo), int(hi))
        except ValueError:
            raise BenchError("--int-range takes NAME=LO:HI, got '%s'" % item) from None
        if out[name][0] > out[name][1]:
            raise BenchError("--int-range %s: LO > HI" % item)
    return out


def make_engines(a, recur_run, renv, say):
    built = eng.list_recur_providers(recur_run, renv)
    wanted = [p.strip() for p in a.providers.split(",") if p.strip()]
    for p in wanted:
        if p not in eng.RECUR_PROVIDERS:
            raise BenchError("unknown provider '%s' (known: %s)" % (
                p, ", ".join(eng.RECUR_PROVIDERS)))
    precisions = [x.strip() for x in a.precision.split(",") if x.strip()]
    for x in precisions:
        if x not in ("fp32", "bf16", "int8"):
            raise BenchError("unknown precision '%s' (fp32, bf16, int8)" % x)
    engines = [eng.RecurEngine(p, recur_run, renv, built, x)
               for p in sorted(wanted, key=DISPLAY_ORDER.index) for x in precisions
               if x == "fp32" or p in eng.PRECISION_PROVIDERS]
    # A tuning cache of this run's own, never the user's: warm loads read what this run tuned.
    cache_dir = tempfile.mkdtemp(prefix="recur-bench-tuning-")
    atexit.register(shutil.rmtree, cache_dir, True)
    for e in engines:
        e.tuning_cache = os.path.join(cache_dir, "tuning-cache")
    peers = [p.strip() for p in a.peers.split(",") if p.strip() and p.strip() != "none"]
    for p in peers:
        if p not in ("onnxruntime", "pytorch"):
            raise BenchError("unknown peer '%s' (onnxruntime, pytorch, none)" % p)
    if "onnxruntime" in peers:
        ort = eng.OrtNodeEngine(a.ort_dir, not a.no_install, a.dry_run, say)
        if not ort.available:
            py = eng.OrtPythonEngine(a.python, ort.reason)
            ort = py if py.available else ort
            if not py.available:
                ort.reason = py.reason
        engines.append(ort)
    if "pytorch" in peers:
        engines.append(eng.TorchEngine(a.python, a.torch_device))
    return engines


def empty_model(cache):
    """A one-node Identity model: what each engine holds with (almost) no model."""
    d = os.path.join(cache, "empty")
    model = os.path.join(d, "model.onnx")
    if not os.path.exists(model):
        import numpy as np
        import onnx
        from onnx import TensorProto, helper
        os.makedirs(d, exist_ok=True)
        g = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="identity")],
                              "empty", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1])])
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 14)])
        m.ir_version = 7
        onnx.save(m, model + ".tmp")
        os.replace(model + ".tmp", model)
        workload.write_feeds(d, [("x", np.ones([1], np.float32))])
    w = workload.Work("(empty model)", model)
    w.feeds_dir = d
    w.inputs = [("x", "float32", (1,))]
    return w


# --- Preparing the work ---------------------------------------------------------------------

def prepare(a, built, recur_run, renv, tmp, say, messages):
    """The Work list (sweep points expanded, feeds written)."""
    base = []
    for s in a.suite:
        for name in (["standard", "models"] if s == "all" else [s]):
            base += workload.suite_work(name, a.suite_dir, a.python)
    for m in a.models:
        base.append(workload.model_work(m))
    if not base:
        raise BenchError("nothing to benchmark: give MODEL.onnx or --suite standard")
    sweep = workload.parse_sweep(a.sweep) if a.sweep else None
    int_ranges = parse_int_ranges(a.int_range)
    works = []
    for w in base:
        # Every provider recur knows, as a machine with every device would assign them: a node
        # none of them can take is reported with each provider's reason.
        plan, err = workload.recur_plan(recur_run, w.model, built, renv)
        if plan is None:
            msg = "%s: no recur provider can run this model:\n    %s" % (
                w.name, err.replace("\n", "\n    "))
            say(msg)
            messages.append(msg)
        w.plan = plan
        inputs = workload.fed_inputs(plan) if plan else _inputs_from_onnx(w.model)
        names = [i["name"] for i in inputs]
        data = workload.read_data_set(w.data_dir, names) if w.data_dir else {}
        if sweep is not None:
            axes, skipped = workload.resolve_sweep(inputs, sweep)
            for s in skipped:
                msg = "%s: %s" % (w.name, s)
                say(msg)
                messages.append(msg)
            points = workload.sweep_points(axes)
            if not points:
                msg = "%s: no sweep point left to time" % w.name
                say(msg)
                messages.append(msg)
                continue
        else:
            axes, points = [], [{}]
        for k, pt in enumerate(points):
            pw = workload.Work(w.name, w.model, w.data_dir, pt, w.kind)
            pw.plan = w.plan
            arrays = workload.make_arrays(pw, inputs, data, axes, int_ranges, a.seed + k)
            pw.feeds_dir = os.path.join(tmp, "w%d" % len(works))
            workload.write_feeds(pw.feeds_dir, arrays)
            pw.inputs = [(n, str(x.dtype), tuple(x.shape)) for n, x in arrays]
            pw.fixed_dims = {c: v for c, v in pw.dims.items() if c not in pt}
            works.append(pw)
    return works


def _inputs_from_onnx(model):
    """The graph inputs (without initializers) when recur cannot load the model at all."""
    try:
        import onnx
        m = onnx.load(model, load_external_data=False)
    except Exception as e:  # noqa: BLE001
        raise BenchError("cannot read %s: %s" % (model, e)) from None
    inits = {i.name for i in m.graph.initializer}
    out = []
    for i in m.graph.input:
        if i.name in inits:
            continue
        t = i.type.tensor_type
        dt = onnx.helper.tensor_dtype_to_np_dtype(t.elem_type) if hasattr(
            onnx.helper, "tensor_dtype_to_np_dtype") else onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[
            t.elem_type]
        shape = [d.dim_param if d.dim_param else (d.dim_value if d.HasField("dim_value") else None)
                 for d in t.shape.dim] if t.HasField("shape") else None
        out.append({"name": i.name, "dtype": str(dt), "shape": shape})
    return out


# --- Measuring ------------------------------------------------------------------------------

class Series:
    """One engine on one work item at one thread count: pooled samples over blocks."""

    def __init__(self, engine):
        self.engine = engine
        self.samples = []
        self.loads = []       # cold: no tuning cache (the untuned rule), and every peer
        self.loads_warm = []  # recur's oneDNN with the cache a tuning block filled
        self.loads_tune = []  # that tuning block: onednn.tune=1, timing at load
        self.load_hwm = []    # peak RSS right after the session was created (VmHWM), MiB
        self.rss = []
        self.blocks = []
        self.error = None
        self.assigned = None
        self.rounds = 0
        self.warmup = 0
        self.repeat = 0


def run_block(e, work, threads, warmup, repeat, timeout, series, mode=None):
    child = eng.run_child(e.command(work, threads, warmup, repeat, mode), e.env(), timeout)
    if child.rc != 0:
        series.error = "failed: " + child.error_text().replace("recur-run: error: ", "")
        return None
    try:
        r = e.parse(child.out)
    except (ValueError, KeyError) as ex:
        series.error = "failed: unreadable output (%s): %s" % (ex, child.out.strip()[-300:])
        return None
    {"warm": series.loads_warm, "tune": series.loads_tune}.get(mode, series.loads).append(
        r["load_ms"])
    if r.get("load_peak_rss_mib") is not None and mode != "tune":
        series.load_hwm.append(r["load_peak_rss_mib"])
    series.rss.append(child.maxrss_mb)
    series.assigned = r.get("assigned") or series.assigned
    series.blocks.append({"warmup": warmup, "repeat": repeat, "mode": mode or "cold",
                          "load_ms": r["load_ms"], "load_peak_rss_mib": r.get("load_peak_rss_mib"),
                          "peak_rss_mib": child.maxrss_mb, "samples_ms": r["samples_ms"],
                          "wall_s": child.wall_s})
    return r["samples_ms"]


def plan_blocks(t_ms, a):
    """(rounds, warmup, repeat) for an engine whose probe run took t_ms."""
    repeat = int(math.ceil(a.min_runs / a.rounds))
    rounds, warmup = a.rounds, a.warmup
    if t_ms >= 1000:
        warmup = 0  # a run this long dwarfs what a first run costs extra
    allowed = int(a.budget * 1000 / max(t_ms, 1e-3))
    if rounds * (warmup + repeat) <= allowed:
        return rounds, warmup, repeat
    if allowed >= rounds * (warmup + 1):
        return rounds, warmup, max(1, allowed // rounds - warmup)
    if warmup and allowed >= rounds * 2:
        return rounds, 1, max(1, allowed // rounds - 1)
    return max(1, min(rounds, allowed)), 0, 1


def measure(work, runnable, threads, a, bar):
    series = {e.name: Series(e) for e in runnable}
    # Probe: one run each, alternated, to size the blocks (and a first load/memory figure).
    for e in runnable:
        s = series[e.name]
        bar.update("%s  %s  probe" % (work.label, e.name))
        # recur's oneDNN probe runs with onednn.tune=1 and fills the tuning cache that its
        # warm blocks then read.
        # A tuning probe's first run times the candidates of every shape the model did not
        # fix (1.5 s against 27 ms a run for ds2 at batch 8): its second run sizes the blocks,
        # and neither is a sample.
        tunes = e.tunes()
        got = run_block(e, work, threads, 0, 2 if tunes else 1, a.timeout, s, "tune")
        bar.update(advance=1)
        if got is None:
            bar.update(advance=a.rounds)
            continue
        t = got[-1]
        s.rounds, s.warmup, s.repeat = plan_blocks(t, a)
        if t >= 1000 and not tunes:
            s.samples += got  # first-run costs are small beside a run this long
        bar.update(advance=a.rounds - s.rounds)  # rounds it will not take
    max_rounds = max([s.rounds for s in series.values()] + [0])
    for r in range(max_rounds):
        # Rotate the order each round so that no engine always runs after the same one.
        order = runnable[r % len(runnable):] + runnable[:r % len(runnable)]
        for e in order:
            s = series[e.name]
            if s.error or r >= s.rounds:
                continue
            bar.update("%s  %s  round %d/%d" % (work.label, e.name, r + 1, s.rounds))
            # Cold and warm loads alternate (cold first): only recur's oneDNN tells them apart.
            got = run_block(e, work, threads, s.warmup, s.repeat, a.timeout, s,
                            "warm" if r % 2 else "cold")
            bar.update(advance=1)
            if got is None:
                bar.update(advance=s.rounds - r - 1)
                continue
            s.samples += got
    return series


def median(v):
    v = [x for x in v if x is not None]
    return sorted(v)[len(v) // 2] if len(v) % 2 else (
        (sorted(v)[len(v) // 2 - 1] + sorted(v)[len(v) // 2]) / 2 if v else None)


def empty_rss(engines_run, threads, cache, a, bar):
    """Peak RSS of each engine on the empty model: the median of as many child processes as
    there are rounds, at least 3. The figure is subtracted from every case's, and one process's
    peak moves by 64 KiB windows with where its libraries land, so a baseline of 3 left the
    smallest models' "over empty" column to chance."""
    w = empty_model(cache)
    out, at_load = {}, {}
    for e in engines_run:
        s = Series(e)
        bar.update("memory of %s with an empty model (%d thread%s)" % (
            e.name, threads, "s" if threads > 1 else ""))
        for _ in range(max(3, a.rounds)):
            if isinstance(e, eng.TorchEngine):
                cmd = [e.python, os.path.join(eng.HERE, "torch_perf.py"), "-", w.feeds_dir,
                       e.torch_device, str(threads), "0", "1"]
                child = eng.run_child(cmd, None, a.timeout)
                if child.rc == 0:
                    s.rss.append(child.maxrss_mb)
            else:
                run_block(e, w, threads, 0, 1, a.timeout, s)
        bar.update(advance=1)
        out[e.name] = median(s.rss) if s.rss else None
        at_load[e.name] = median(s.load_hwm) if s.load_hwm else None
    return out, at_load


def profile_path(directory, work, engine, threads):
    name = "%s.%s.t%d.trace.json" % (work.label, engine, threads)
    return os.path.join(directory, "".join(c if c.isalnum() or c in "._-=" else "_" for c in name))


def profile_case(e, work, threads, a, entry, bar):
    """One more recur-run of the case with --profile (warm-up 1, 3 runs), outside the timing;
    the trace's path goes in the result entry, or why there is none."""
    os.makedirs(a.profile, exist_ok=True)
    path = profile_path(a.profile, work, e.name, threads)
    cmd = e.command(work, threads, 1, 3) + ["--profile", path]
    child = eng.run_child(cmd, e.env(), a.timeout)
    if child.rc != 0 or not os.path.exists(path):
        entry["profile_error"] = child.error_text()[-400:] or "no trace written"
        bar.message("%s: %s: profile failed: %s" % (work.label, e.name, entry["profile_error"]))
        return
    entry["profile"] = path


def result_entry(work, e, threads, s, skip_reason=None):
    r = {"case": work.name, "point": work.point, "threads": threads, "engine": e.name,
         "family": e.family, "device": e.device, "model": os.path.relpath(work.model, ROOT)
         if work.model.startswith(ROOT) else work.model,
         "inputs": [{"name": n, "dtype": d, "shape": list(sh)} for n, d, sh in work.inputs],
         "dims": work.dims, "fixed_dims": getattr(work, "fixed_dims", {})}
    if isinstance(e, eng.RecurEngine):
        r["providers"] = e.chain
        r["nodes"] = e.nodes_summary(work)
    if skip_reason:
        r.update(status="skipped", reason=skip_reason)
        return r
    if s.error and not s.samples:
        r.update(status="failed", reason=s.error)
        return r
    r.update(status="ok", latency=stats.summarize(s.samples),
             samples_ms=[float("%.5g" % x) for x in s.samples],
             load_ms=median(s.loads), load_ms_all=s.loads, load_warm_ms=median(s.loads_warm),
             load_warm_ms_all=s.loads_warm, load_tune_ms=median(s.loads_tune),
             load_peak_rss_mib=median(s.load_hwm), load_peak_rss_mib_all=s.load_hwm,
             peak_rss_mib=median(s.rss),
             peak_rss_mib_all=s.rss, rounds=s.rounds, warmup=s.warmup, repeat=s.repeat,
             blocks=len(s.blocks), assigned=s.assigned)
    if s.error:
        r["reason"] = s.error
    return r


def add_ratios(result):
    base = result.get("baseline")
    by = {}
    for r in result["results"]:
        if r["status"] == "ok":
            by[(r["case"], tuple(sorted(r["point"].items())), r["threads"], r["engine"])] = r
    for (case, pt, t, e), r in by.items():
        b = by.get((case, pt, t, base))
        if b and e != base:
            r["speedup"] = b["latency"]["median"] / r["latency"]["median"]
        empty = result.get("empty_rss_mib", {}).get(str(t), {}).get(e)
        if empty is not None and r.get("peak_rss_mib") is not None:
            r["rss_over_empty_mib"] = max(0.0, r["peak_rss_mib"] - empty)
        empty = result.get("empty_load_rss_mib", {}).get(str(t), {}).get(e)
        if empty is not None and r.get("load_peak_rss_mib") is not None:
            r["load_rss_over_empty_mib"] = max(0.0, r["load_peak_rss_mib"] - empty)


def add_crossovers(result):
    out = []
    ok = [r for r in result["results"] if r["status"] == "ok" and r["point"]]
    keys = []
    for r in ok:
        for k in r["point"]:
            if k not in keys:
                keys.append(k)
    for case in sorted({r["case"] for r in ok}):
        for t in result["settings"]["threads"]:
            rs = [r for r in ok if r["case"] == case and r["threads"] == t]
            for key in keys:
                others = sorted({tuple(sorted((k, v) for k, v in r["point"].items() if k != key))
                                 for r in rs if key in r["point"]})
                for other in others:
                    line = [r for r in rs if key in r["point"] and tuple(sorted(
                        (k, v) for k, v in r["point"].items() if k != key)) == other]
                    xs = sorted({r["point"][key] for r in line})
                    if len(xs) < 2:
                        continue
                    series = {}
                    for r in line:
                        series.setdefault(r["engine"], [None] * len(xs))[
                            xs.index(r["point"][key])] = r["latency"]["median"]
                    out.append({"case": case, "threads": t, "axis": key, "fixed": dict(other),
                                "xs": xs, "changes": stats.crossovers(xs, series)})
    result["crossovers"] = out


def dry_run_text(works, engines, threads, a, baseline):
    lines = ["recur-bench plan (dry run: nothing is timed)", "engines:"]
    for e in engines:
        lines.append("  %-13s %s" % (e.name + ":", e.describe()))
    lines.append("baseline: %s" % (baseline or "none"))
    lines.append("threads: %s; %d rounds, %d warm-up runs per block, at least %d timed runs per "
                 "engine and case (budget %g s of runs for slow engines)" % (
                     ",".join(map(str, threads)), a.rounds, a.warmup, a.min_runs, a.budget))
    lines.append("cases:")
    for w in works:
        ins = ", ".join("%s %s[%s]" % (n, d, ",".join(map(str, sh))) for n, d, sh in w.inputs)
        lines.append("  %s: %s" % (w.label, ins or "(no input)"))
        for note in w.notes:
            lines.append("    input note: %s" % note)
        for e in engines:
            if not e.available:
                continue
            why = e.check(w)
            if why:
                lines.append("    %s: skipped: %s" % (e.name, why))
            else:
                extra = ""
                if isinstance(e, eng.RecurEngine):
                    extra = " (providers %s; nodes %s)" % (",".join(e.chain), e.nodes_summary(w))
                lines.append("    %s: runs%s" % (e.name, extra))
    return "\n".join(lines)


def main(argv=None):
    a = parse_args(sys.argv[1:] if argv is None else argv)
    enabled = {"auto": None, "always": True, "never": False}[a.progress]
    bar = prog.Progress(1, enabled=enabled)
    try:
        return _main(a, bar)
    except BenchError as e:
        bar.close()
        print("recur-bench: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        bar.close()
        print("recur-bench: interrupted", file=sys.stderr)
        return 130


def dump_json(result, f):
    """Indented, except that each result (with its samples) stays on one line."""
    head = json.dumps({k: v for k, v in result.items() if k != "results"}, indent=1)
    rows = ",\n".join("  " + json.dumps(r) for r in result.get("results", []))
    f.write(head[:-2] + ',\n "results": [\n' + rows + "\n ]\n}\n")


def _write_outputs(result, a, bar):
    text = report.full_text(result)
    print(text, end="")
    if a.json and not a.from_json:
        os.makedirs(os.path.dirname(os.path.abspath(a.json)), exist_ok=True)
        with open(a.json, "w") as f:
            dump_json(result, f)
        bar.message("wrote %s" % a.json)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(report.markdown(result))
        bar.message("wrote %s" % a.markdown)
    if a.plot:
        from . import plot
        try:
            if plot.plot(result, a.plot):
                bar.message("wrote %s" % a.plot)
            else:
                bar.message("no plot: nothing was timed")
        except ImportError as e:
            bar.message("no plot: matplotlib is missing (%s); install python3-matplotlib "
                        "(tools/install-deps.sh --bench)" % e)


def _main(a, bar):
    if a.from_json:
        with open(a.from_json) as f:
            result = json.load(f)
        _write_outputs(result, a, bar)
        return 0
    threads = parse_threads(a.threads)
    recur_run = find_recur_run(a.recur_run)
    if not os.path.exists(recur_run):
        raise BenchError("no recur-run at %s: build it (ninja -C build recur-run) or pass "
                         "--recur-run" % recur_run)
    renv = workload.recur_env()
    machine = envmod.machine(ROOT)
    engines = make_engines(a, recur_run, renv, bar.message)
    available = [e for e in engines if e.available]
    baseline = a.baseline
    if baseline is None:
        baseline = next((e.name for e in available if e.name == "onnxruntime"), None) or next(
            (e.name for e in available if e.family == "recur"), None)
    elif baseline not in [e.name for e in engines]:
        raise BenchError("--baseline %s is not among the engines (%s)" % (
            baseline, ", ".join(e.name for e in engines)))
    messages = []
    if baseline and baseline not in [e.name for e in available]:
        messages.append("the baseline %s is unavailable: no ratios" % baseline)
    tmp = tempfile.mkdtemp(prefix="recur-bench-")
    try:
        # Every provider an engine's chain may run (the nodes its first provider declines go
        # down the chain, reference last): a model that needs the reference for a Gather is
        # not one that "no recur provider can run".
        built = [p for p in eng.RECUR_PROVIDERS if any(
            isinstance(e, eng.RecurEngine) and e.built and p in e.chain for e in engines)]
        works = prepare(a, built or ["reference"], recur_run, renv, tmp, bar.message, messages)
        if a.dry_run:
            print(dry_run_text(works, engines, threads, a, baseline))
            if messages:
                print("skipped and unsupported:\n" + "\n".join("  " + m for m in messages))
            return 0 if any(e.available and not e.check(w) for w in works for e in engines) \
                else 1
        command = " ".join(["recur-bench"] + [x for x in sys.argv[1:]])
        what = ["the standard suite" if s == "standard" else "models/" if s == "models" else
                "the standard suite and models/" for s in a.suite]
        what += [workload.model_work(m).name for m in a.models]
        result = {"tool": "recur-bench", "format": 1, "command": command, "machine": machine,
                  "title": ", ".join(what),
                  "recur_run": recur_run, "baseline": baseline,
                  "engines": [{"name": e.name, "family": e.family, "device": e.device,
                               "available": e.available, "reason": e.reason,
                               "version": e.version,
                               "providers": getattr(e, "chain", None)} for e in engines],
                  "settings": {"threads": threads, "rounds": a.rounds, "warmup": a.warmup,
                               "repeat": int(math.ceil(a.min_runs / a.rounds)),
                               "min_runs": a.min_runs, "budget_s": a.budget, "seed": a.seed},
                  "messages": messages, "results": [], "empty_rss_mib": {},
                  "empty_load_rss_mib": {}}
        plan = []
        for w in works:
            runnable, skipped = [], []
            for e in available:
                why = e.check(w)
                (skipped.append((e, why)) if why else runnable.append(e))
            plan.append((w, runnable, skipped))
        total = sum(len(r) for _, r, _ in plan) * (1 + a.rounds) * len(threads) + len(
            available) * len(threads)
        if not any(r for _, r, _ in plan):
            print(report.header_text(dict(result, load_avg_after=envmod.load_avg())))
            print("engines:\n" + report.engines_text(result))
            for w, _, skipped in plan:
                for e, why in skipped:
                    print("%s: %s: %s" % (w.label, e.name, why))
            print("recur-bench: nothing to time", file=sys.stderr)
            return 1
        bar.total = total
        bar.update("starting")
        for t in threads:
            result["empty_rss_mib"][str(t)], result["empty_load_rss_mib"][str(t)] = empty_rss(
                available, t, workload.CACHE, a, bar)
            for w, runnable, skipped in plan:
                series = measure(w, runnable, t, a, bar) if runnable else {}
                for e in engines:
                    if not e.available:
                        continue
                    why = next((y for x, y in skipped if x is e), None)
                    entry = result_entry(w, e, t, series.get(e.name), why)
                    if a.profile and entry["status"] == "ok" and isinstance(e, eng.RecurEngine):
                        profile_case(e, w, t, a, entry, bar)
                    entry["load_avg_after"] = envmod.load_avg()
                    result["results"].append(entry)
                    if entry["status"] == "failed":
                        bar.message("%s: %s %s" % (w.label, e.name, entry["reason"][:400]))
        bar.close()
        result["load_avg_after"] = envmod.load_avg()
        add_ratios(result)
        add_crossovers(result)
        result["seed_comparison"] = report.seed_comparison(result)
        _write_outputs(result, a, bar)
        if not any(r["status"] == "ok" for r in result["results"]):
            print("recur-bench: no engine could run any case", file=sys.stderr)
            return 1
        return 0
    finally:
        bar.close()
        shutil.rmtree(tmp, ignore_errors=True)
