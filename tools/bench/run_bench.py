#!/usr/bin/python3
"""The CPU benchmark of docs/benchmarking.md: the standard suite with `recur-run --perf`
on the reference and oneDNN providers, against ONNX Runtime 1.30 (CPU, through
onnxruntime-node), at 1 and 2 threads. Engines alternate in blocks within one run (oneDNN,
ONNX Runtime, oneDNN, ONNX Runtime, ...) and the samples of all blocks are pooled; the
reference provider, orders of magnitude slower, runs one short block per case.

  /usr/bin/python3 tools/bench/run_bench.py [--build build] [--threads 1,2] [--rounds 4]
      [--repeat 6] [--warmup 3] [--cases lstm_med,...] [--no-reference] [--no-ort]
      [--json OUT.json] [--markdown OUT.md]

The suite's models go to ~/.cache/recur-bench/suite (tools/bench/gen_suite.py), and
onnxruntime-node is installed with `npm install --ignore-scripts` into
~/.cache/recur-bench/ort; without npm the ONNX Runtime step is skipped with a message.
Benchmarks never run in the test suite.
"""
import argparse
import datetime
import json
import math
import os
import platform
import shutil
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
CACHE = os.path.join(os.path.expanduser("~"), ".cache", "recur-bench")
ORT_VERSION = "1.30.0"
CASES = ["lstm_stream", "lstm_med", "lstm_large", "gru_lbr1", "gru_lbr0", "bilstm", "lstm_peep",
         "rnn_tanh"]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def sh(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw).stdout


def ensure_suite(suite_dir):
    if all(os.path.exists(os.path.join(suite_dir, c, "feeds.json")) for c in CASES):
        return
    log("generating the standard suite in", suite_dir)
    subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_suite.py"), suite_dir], check=True)


def ensure_ort(ort_dir):
    """Returns NODE_PATH for onnxruntime-node, or None (with a message) when it cannot be had."""
    if not shutil.which("npm") or not shutil.which("node"):
        log("npm/node not found: skipping the ONNX Runtime comparison")
        return None
    mod = os.path.join(ort_dir, "node_modules")
    pkg = os.path.join(mod, "onnxruntime-node", "package.json")
    have = None
    if os.path.exists(pkg):
        with open(pkg) as f:
            have = json.load(f).get("version")
    if have != ORT_VERSION:
        log("installing onnxruntime-node@%s into %s" % (ORT_VERSION, ort_dir))
        os.makedirs(ort_dir, exist_ok=True)
        try:
            if not os.path.exists(os.path.join(ort_dir, "package.json")):
                sh(["npm", "init", "-y"], cwd=ort_dir)
            # --ignore-scripts skips a download that cannot work here; the CPU library ships
            # inside the package.
            sh(["npm", "install", "--ignore-scripts", "onnxruntime-node@" + ORT_VERSION],
               cwd=ort_dir)
        except subprocess.CalledProcessError as e:
            log("npm install failed, skipping ONNX Runtime:", e.stderr.strip()[-500:])
            return None
    return mod


def load_avg():
    return [round(x, 2) for x in os.getloadavg()]


def machine():
    name = platform.processor() or "?"
    try:
        for line in sh(["lscpu"]).splitlines():
            if line.startswith("Model name:"):
                name = line.split(":", 1)[1].strip()
    except (OSError, subprocess.CalledProcessError):
        pass
    return "%s, %d CPUs, %s" % (name, os.cpu_count() or 0, platform.platform())


def git_commit():
    try:
        rev = sh(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"]).strip()
        dirty = sh(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"]).strip()
        return rev + ("+dirty" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "chosen at the first run (dynamic shapes)"


def run_recur(recur_run, case_dir, provider, threads, warmup, repeat, extra=()):
    cmd = [recur_run, case_dir, "--providers", provider, "--threads", str(threads), "--perf",
           "--json", "--warmup", str(warmup), "--repeat", str(repeat)]
    if provider.startswith("onednn"):
        cmd.append("--explain")
    cmd += list(extra)
    out = sh(cmd)
    lines = out.strip().splitlines()
    res = json.loads(lines[-1])
    notes = [l.strip() for l in lines[:-1] if "note:" in l]
    return res, notes


def run_ort(node_path, model, feeds_dir, threads, warmup, repeat):
    env = dict(os.environ, NODE_PATH=node_path)
    out = sh(["node", os.path.join(HERE, "ort_perf.js"), model, feeds_dir, str(threads),
              str(warmup), str(repeat)], env=env)
    return json.loads(out.strip().splitlines()[-1])


def model_feeds(model_dir, cache_dir):
    """The first data set of a models/ folder as raw files for ort_perf.js; returns the folder."""
    import glob
    import onnx
    from onnx import numpy_helper
    sys.path.insert(0, HERE)
    from gen_suite import write_feeds
    out = os.path.join(cache_dir, os.path.basename(os.path.normpath(model_dir)))
    os.makedirs(out, exist_ok=True)
    m = onnx.load(os.path.join(model_dir, "model.onnx"), load_external_data=False)
    inits = {i.name for i in m.graph.initializer}
    names = [i.name for i in m.graph.input if i.name not in inits]
    arrays = []
    files = sorted(glob.glob(os.path.join(model_dir, "test_data_set_0", "input_*.pb")),
                   key=lambda f: int(os.path.basename(f)[6:-3]))
    for k, f in enumerate(files):
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        arrays.append((t.name or names[k], numpy_helper.to_array(t)))
    write_feeds(out, arrays)
    return out


def stats(samples):
    s = sorted(samples)
    if not s:
        return None
    def pct(p):
        pos = p * (len(s) - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, len(s) - 1)
        return s[lo] + (s[hi] - s[lo]) * (pos - lo)
    return {"n": len(s), "median": statistics.median(s), "p90": pct(0.9), "min": s[0]}


def fmt_ms(v):
    if v is None:
        return "-"
    return "%.3g" % v if v < 10 else "%.0f" % v if v >= 100 else "%.1f" % v


def picked(notes):
    """'brgemm, weights any, 2 threads (batch split)' from the oneDNN run's explain notes."""
    for n in notes:
        if "note: oneDNN " in n:
            return n.split("note: oneDNN ", 1)[1].strip()
        if "note: recur's small-cell " in n:
            return n.split("note: ", 1)[1].split(",", 1)[0].strip()
    return "chosen at the first run (dynamic shapes)"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--suite-dir", default=os.path.join(CACHE, "suite"))
    ap.add_argument("--ort-dir", default=os.path.join(CACHE, "ort"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=4, help="alternating blocks per engine")
    ap.add_argument("--repeat", type=int, default=6, help="timed runs per block")
    ap.add_argument("--warmup", type=int, default=3, help="warm-up runs per block")
    ap.add_argument("--reference-repeat", type=int, default=2)
    ap.add_argument("--cases", default=",".join(CASES))
    ap.add_argument("--no-reference", action="store_true")
    ap.add_argument("--no-ort", action="store_true")
    ap.add_argument("--no-models", action="store_true", help="skip the models/ folders")
    ap.add_argument("--render", metavar="JSON",
                    help="only write --markdown again from an earlier run's JSON")
    ap.add_argument("--json", default=os.path.join(ROOT, "build", "bench", "bench-cpu.json"))
    ap.add_argument("--markdown", default=os.path.join(ROOT, "build", "bench", "bench-cpu.md"))
    args = ap.parse_args()
    if args.render:
        with open(args.render) as f:
            res = json.load(f)
        threads = sorted({e["threads"] for e in res["results"]})
        with open(args.markdown, "w") as f:
            f.write(markdown(res, threads))
        return

    recur_run = os.path.join(args.build, "tools", "recur-run")
    if not os.path.exists(recur_run):
        sys.exit("no recur-run at %s: build it first" % recur_run)
    ensure_suite(args.suite_dir)
    node_path = None if args.no_ort else ensure_ort(args.ort_dir)
    cases = [c for c in args.cases.split(",") if c]
    threads_list = [int(t) for t in args.threads.split(",")]

    started = datetime.datetime.now().astimezone()
    result = {
        "command": " ".join([os.path.relpath(sys.argv[0], ROOT)] + sys.argv[1:]),
        "machine": machine(),
        "date": started.isoformat(timespec="seconds"),
        "commit": git_commit(),
        "ort": ("onnxruntime-node " + ORT_VERSION) if node_path else None,
        "rounds": args.rounds, "repeat": args.repeat, "warmup": args.warmup,
        "reference_repeat": args.reference_repeat,
        "results": [],
    }
    # The standard suite, then the whole models of models/ (not in the suite's means).
    work = [(c, os.path.join(args.suite_dir, c), os.path.join(args.suite_dir, c), False)
            for c in cases]
    if not args.no_models:
        for d in sorted(os.listdir(os.path.join(ROOT, "models"))):
            md = os.path.join(ROOT, "models", d)
            if os.path.exists(os.path.join(md, "model.onnx")):
                work.append(("models/" + d, md,
                             model_feeds(md, os.path.join(CACHE, "models")) if node_path else md,
                             True))
    for threads in threads_list:
        for case, case_dir, feeds_dir, is_model in work:
            load_before = load_avg()
            samples = {"onednn": [], "ort": [], "reference": []}
            load_ms = {"onednn": [], "ort": [], "reference": []}
            notes = []
            choices = []
            for r in range(args.rounds):
                # A whole model's glue operators (Transpose, Gather, ...) run on the reference.
                res, n = run_recur(recur_run, case_dir,
                                   "onednn,reference" if is_model else "onednn", threads,
                                   args.warmup, args.repeat)
                samples["onednn"] += res["samples_ms"]
                load_ms["onednn"].append(res["load_ms"])
                notes.append(n)
                choices.append(picked(n))
                if node_path:
                    o = run_ort(node_path, os.path.join(case_dir, "model.onnx"), feeds_dir,
                                threads, args.warmup, args.repeat)
                    samples["ort"] += o["samples_ms"]
                    load_ms["ort"].append(o["load_ms"])
            if not args.no_reference:
                res, _ = run_recur(recur_run, case_dir, "reference", threads, 0,
                                   args.reference_repeat)
                samples["reference"] += res["samples_ms"]
                load_ms["reference"].append(res["load_ms"])
            # Each block is a new session, which chooses again: report every choice made.
            counts = {}
            for c in choices:
                counts[c] = counts.get(c, 0) + 1
            summary = "; ".join("%s (%d/%d blocks)" % (c, k, len(choices)) if len(counts) > 1
                                else c for c, k in sorted(counts.items(), key=lambda x: -x[1]))
            entry = {"case": case, "threads": threads, "model": is_model,
                     "load_avg_before": load_before,
                     "load_avg_after": load_avg(), "onednn_choice": summary,
                     "onednn_notes": notes}
            for eng in samples:
                entry[eng] = stats(samples[eng])
                if entry[eng]:
                    entry[eng]["load_ms_median"] = statistics.median(load_ms[eng])
                    entry[eng]["samples_ms"] = samples[eng]
            if entry["ort"] and entry["onednn"]:
                entry["speedup_vs_ort"] = entry["ort"]["median"] / entry["onednn"]["median"]
            if entry["reference"] and entry["onednn"]:
                entry["speedup_vs_reference"] = entry["reference"]["median"] / entry["onednn"]["median"]
            result["results"].append(entry)
            log("%-12s %dt  onednn %s ms  ort %s ms  x%s  [%s]  load %s" % (
                case, threads, fmt_ms(entry["onednn"]["median"]),
                fmt_ms(entry["ort"]["median"]) if entry["ort"] else "-",
                "%.2f" % entry["speedup_vs_ort"] if "speedup_vs_ort" in entry else "-",
                entry["onednn_choice"], entry["load_avg_after"]))
    for threads in threads_list:
        rs = [e["speedup_vs_ort"] for e in result["results"]
              if e["threads"] == threads and "speedup_vs_ort" in e and not e["model"]]
        if rs:
            result.setdefault("geomean_vs_ort", {})[str(threads)] = math.exp(
                sum(math.log(x) for x in rs) / len(rs))
            result.setdefault("min_vs_ort", {})[str(threads)] = min(rs)

    os.makedirs(os.path.dirname(os.path.abspath(args.json)), exist_ok=True)
    with open(args.json, "w") as f:
        json.dump(result, f, indent=1)
    md = markdown(result, threads_list)
    os.makedirs(os.path.dirname(os.path.abspath(args.markdown)), exist_ok=True)
    with open(args.markdown, "w") as f:
        f.write(md)
    print(md)
    log("wrote", args.json, "and", args.markdown)


def markdown(res, threads_list):
    out = ["# CPU benchmark: recur (oneDNN provider) against ONNX Runtime", ""]
    out.append("- Command: `%s`" % res["command"])
    out.append("- Machine: %s" % res["machine"])
    out.append("- Date: %s" % res["date"])
    out.append("- Commit: %s" % res["commit"])
    out.append("- Peer: %s (CPU execution provider, intra-op threads = the column's threads, "
               "inter-op 1, graph optimisation 'all'). The Node binding adds a few microseconds "
               "per run, which matters only for lstm_stream." % (res["ort"] or "not run"))
    out.append("- Method: %d alternating blocks per engine and case (recur-run --perf, then the "
               "ONNX Runtime script), each %d warm-up runs and %d timed runs; medians, p90 and "
               "minimum over the pooled samples. The reference provider ran one block of %d "
               "run(s) without warm-up. Ratios are ONNX Runtime's median over oneDNN's (higher "
               "is better for recur). Every oneDNN block is a new session, which chooses its "
               "implementation and threading again: 'picked' lists each block's choice. The "
               "load average is the 1-minute one after the case." % (
                   res["rounds"], res["warmup"], res["repeat"], res.get("reference_repeat", 1)))
    out.append("- Session creation (median, ms; oneDNN includes timing its candidates): " +
               ", ".join("%s %dt %.0f vs ORT %.0f" % (
                   e["case"], e["threads"], e["onednn"]["load_ms_median"],
                   e["ort"]["load_ms_median"] if e["ort"] else float("nan"))
                   for e in res["results"] if not e["model"]) + ".")
    out.append("- Suite: docs/benchmarking.md, generated by tools/bench/gen_suite.py "
               "(fp32, one RNN node, random weights of scale 0.1, random normal inputs).")
    out.append("")
    for threads, models in [(t, m) for m in (False, True) for t in threads_list]:
        rows = [e for e in res["results"] if e["threads"] == threads and e["model"] == models]
        if not rows:
            continue
        out.append("## %s, %d thread%s" % ("Whole models (models/)" if models else
                                           "Standard suite", threads, "s" if threads > 1 else ""))
        out.append("")
        out.append("| case | reference p50 ms | oneDNN p50 ms (p90, min) | ONNX Runtime p50 ms "
                   "(p90, min) | oneDNN vs ORT | oneDNN picked | load avg |")
        out.append("|---|---|---|---|---|---|---|")
        for e in rows:
            def cell(s):
                if not s:
                    return "-"
                return "%s (%s, %s)" % (fmt_ms(s["median"]), fmt_ms(s["p90"]), fmt_ms(s["min"]))
            out.append("| %s | %s | %s | %s | %s | %s | %s |" % (
                e["case"], fmt_ms(e["reference"]["median"]) if e["reference"] else "-",
                cell(e["onednn"]), cell(e["ort"]),
                "**%.2fx**" % e["speedup_vs_ort"] if "speedup_vs_ort" in e else "-",
                e["onednn_choice"], e["load_avg_after"][0]))
        g = None if models else res.get("geomean_vs_ort", {}).get(str(threads))
        if g:
            out.append("| **geometric mean** | | | | **%.2fx** (min %.2fx) | | |" % (
                g, res["min_vs_ort"][str(threads)]))
        out.append("")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    main()
