#!/usr/bin/python3
"""Latency with one core taken by another process (issue 13).

Starts a busy loop pinned to one CPU, then times recur-run --perf with --threads 1 and
--threads 2 alternately (rounds of A B A B ...) on each model, and prints the p50 of each and
the ratio threads-2 / threads-1 per round and overall. The goal is a ratio of at most 1.3: a
second thread must not make a run collapse when the core it wants is busy.

  tools/bench/busy_core.py [--recur-run build/tools/recur-run] [--rounds 5] [--repeat 200]
                           [--busy-cpu 1] [--no-busy] [MODEL ...]

Models default to models/vad_streaming and the standard suite's lstm_stream
(~/.cache/recur-bench/suite/lstm_stream, written by tools/bench/gen_suite.py when absent).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
SUITE = os.path.expanduser("~/.cache/recur-bench/suite")


def busy_loop(cpu):
    # A child that spins forever on one CPU; killed at the end.
    code = "import os; os.sched_setaffinity(0, {%d})\nwhile True: pass\n" % cpu
    return subprocess.Popen([sys.executable, "-c", code])


def p50(recur_run, model, threads, warmup, repeat):
    args = [recur_run, model, "--perf", "--json", "--threads", str(threads),
            "--warmup", str(warmup), "--repeat", str(repeat)]
    if not os.path.isdir(os.path.join(model, "test_data_set_0")) and not model.endswith(".onnx"):
        args.append("--random-inputs")
    out = subprocess.run(args, check=True, capture_output=True, text=True).stdout
    return json.loads(out)["latency_ms"]["p50"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--recur-run", default=os.path.join(ROOT, "build/tools/recur-run"))
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=20)
    ap.add_argument("--repeat", type=int, default=200)
    ap.add_argument("--busy-cpu", type=int, default=1)
    ap.add_argument("--no-busy", action="store_true", help="measure without the busy loop")
    args = ap.parse_args()
    models = args.models
    if not models:
        if not os.path.exists(os.path.join(SUITE, "lstm_stream", "model.onnx")):
            subprocess.run(["/usr/bin/python3", os.path.join(HERE, "gen_suite.py"), SUITE],
                           check=True, capture_output=True)
        models = [os.path.join(ROOT, "models/vad_streaming"), os.path.join(SUITE, "lstm_stream")]
    busy = None if args.no_busy else busy_loop(args.busy_cpu)
    worst = 0.0
    try:
        for model in models:
            t1, t2 = [], []
            for r in range(args.rounds):
                t1.append(p50(args.recur_run, model, 1, args.warmup, args.repeat))
                t2.append(p50(args.recur_run, model, 2, args.warmup, args.repeat))
                print(f"{os.path.basename(model.rstrip('/'))} round {r}: threads1 p50 {t1[-1]:.3f} ms"
                      f"  threads2 p50 {t2[-1]:.3f} ms  ratio {t2[-1] / t1[-1]:.2f}", flush=True)
            ratios = [b / a for a, b in zip(t1, t2)]
            med = statistics.median(ratios)
            worst = max(worst, med)
            print(f"{os.path.basename(model.rstrip('/'))}: median p50 threads1 "
                  f"{statistics.median(t1):.3f} ms, threads2 {statistics.median(t2):.3f} ms; "
                  f"ratio median {med:.2f} (min {min(ratios):.2f}, max {max(ratios):.2f})"
                  f"{'' if med <= 1.3 else '  > 1.3'}", flush=True)
    finally:
        if busy:
            busy.kill()
            busy.wait()
    return 0


if __name__ == "__main__":
    sys.exit(main())
