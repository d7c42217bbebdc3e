#!/usr/bin/python3
"""Run time of the oneDNN RNN kernel's untuned choice (the rule, what a session takes with an
empty tuning cache) against the tuned one (timed by onednn.tune=1 and kept in a cache), on the
standard suite and on models/, at each thread count (issue 15: within 5%).

  /usr/bin/python3 tools/bench/untuned_vs_tuned.py [--threads 1,2] [--rounds 4] [--repeat 10]
      [--recur-run build/tools/recur-run] [--cases lstm_med,models/char_lstm_lm] [--json OUT]

Per case and thread count: one recur-run fills a tuning cache of its own with onednn.tune=1;
then `--rounds` rounds each run the untuned (--tuning-cache off) and the tuned (that cache)
session in a new process, in the order U T, T U, U T, ..., each `--warmup` untimed and
`--repeat` timed runs. The ratio is the pooled median of untuned / tuned (above 1: the rule is
slower); the spread is the lowest and highest ratio of one round's medians. Where both pick
the same implementation for every bucket ("same"), any difference is noise. The suite comes
from tools/bench/gen_suite.py (written to ~/.cache/recur-bench/suite if missing).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
SUITE = ["lstm_stream", "lstm_med", "lstm_large", "gru_lbr1", "gru_lbr0", "bilstm", "lstm_peep",
         "rnn_tanh"]
# "recur onednn: NODE: LSTM N=32 T~100: weights any, 2 threads (batch split) (DETAIL)"
CHOICE = re.compile(r"recur onednn: ([^:]+): (.*) \(([^()]*)\)$")


def suite_dir():
    d = os.path.join(os.path.expanduser("~"), ".cache", "recur-bench", "suite")
    if not all(os.path.exists(os.path.join(d, c, "model.onnx")) for c in SUITE):
        subprocess.run([sys.executable, os.path.join(ROOT, "tools", "bench", "gen_suite.py"), d],
                       check=True)
    return d


def all_cases():
    d = suite_dir()
    out = [(c, os.path.join(d, c)) for c in SUITE]
    models = os.path.join(ROOT, "models")
    for m in sorted(os.listdir(models)):
        if os.path.exists(os.path.join(models, m, "test_data_set_0")):
            out.append(("models/" + m, os.path.join(models, m)))
    return out


def run(recur_run, folder, threads, extra, warmup, repeat):
    cmd = [recur_run, folder, "--perf", "--json", "--threads", str(threads), "--warmup",
           str(warmup), "--repeat", str(repeat), "--set", "onednn.verbose=1"] + extra
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError("%s failed: %s" % (" ".join(cmd), p.stderr.strip()[-400:]))
    res = json.loads(p.stdout.strip().splitlines()[-1])
    # Each node's choice per bucket, without the timing details.
    choices = sorted({(m.group(1), m.group(2)) for m in map(CHOICE.match, p.stderr.splitlines())
                      if m})
    return res, choices


def measure(recur_run, folder, threads, a, cache):
    if os.path.exists(cache):
        os.remove(cache)
    _, tuned_choice = run(recur_run, folder, threads,
                          ["--tuning-cache", cache, "--set", "onednn.tune=1"], 1, 1)
    kinds = {"untuned": ["--tuning-cache", "off"], "tuned": ["--tuning-cache", cache]}
    samples = {"untuned": [], "tuned": []}
    rounds = []
    choice = {}
    for r in range(a.rounds):
        order = ["untuned", "tuned"] if r % 2 == 0 else ["tuned", "untuned"]
        med = {}
        for k in order:
            res, ch = run(recur_run, folder, threads, kinds[k], a.warmup, a.repeat)
            samples[k] += res["samples_ms"]
            med[k] = statistics.median(res["samples_ms"])
            choice[k] = ch
        rounds.append(med["untuned"] / med["tuned"])
    ratio = statistics.median(samples["untuned"]) / statistics.median(samples["tuned"])
    same = [c for _, c in choice["untuned"]] == [c for _, c in choice["tuned"]]
    return {"threads": threads, "untuned_ms": statistics.median(samples["untuned"]),
            "tuned_ms": statistics.median(samples["tuned"]), "ratio": ratio,
            "round_ratios": rounds, "same_choice": same, "untuned_choice": choice["untuned"],
            "tuned_choice": choice["tuned"], "tuning_run_choice": tuned_choice}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recur-run", default=os.path.join(ROOT, "build", "tools", "recur-run"))
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=4)
    ap.add_argument("--warmup", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--cases", default="", help="comma-separated names (default: all)")
    ap.add_argument("--json", help="write every figure here")
    a = ap.parse_args()
    cases = all_cases()
    if a.cases:
        want = a.cases.split(",")
        cases = [c for c in cases if c[0] in want]
    threads = [int(t) for t in a.threads.split(",")]
    out = []
    tmp = tempfile.mkdtemp(prefix="recur-untuned-")
    print("%-32s %3s %11s %11s %7s %15s  %s" % ("case", "thr", "untuned ms", "tuned ms",
                                               "ratio", "round spread", "choice"))
    for t in threads:
        for name, folder in cases:
            try:
                m = measure(a.recur_run, folder, t, a, os.path.join(tmp, "cache"))
            except RuntimeError as e:
                print("%-32s %3d  error: %s" % (name, t, e))
                continue
            m["case"] = name
            out.append(m)
            what = "same" if m["same_choice"] else "untuned: %s; tuned: %s" % (
                "; ".join(c for _, c in m["untuned_choice"]),
                "; ".join(c for _, c in m["tuned_choice"]))
            print("%-32s %3d %11.4g %11.4g %6.3fx %7.3f-%-7.3f  %s" % (
                name, t, m["untuned_ms"], m["tuned_ms"], m["ratio"], min(m["round_ratios"]),
                max(m["round_ratios"]), what), flush=True)
    worst = max(out, key=lambda m: m["ratio"]) if out else None
    if worst:
        print("worst: %s at %d thread(s): untuned %.3fx the tuned run time" % (
            worst["case"], worst["threads"], worst["ratio"]))
    # Where both sessions made the same choice they run the same code (the small-cell kernels
    # make none): their ratio is the noise of the machine, the round spread its size.
    differ = [m for m in out if not m["same_choice"]]
    if differ:
        w = max(differ, key=lambda m: m["ratio"])
        print("worst where the choices differ: %s at %d thread(s): untuned %.3fx the tuned run "
              "time" % (w["case"], w["threads"], w["ratio"]))
    else:
        print("the choices differ nowhere")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
