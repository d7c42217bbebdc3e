#!/usr/bin/python3
"""fp32 RNNs against the machine's GEMM ceiling (docs/precision.md, "The sgemm ceiling").

  /usr/bin/python3 tools/bench/sgemm_ceiling.py [--rounds 5] [--threads 1] [--precision fp32]

Alternates, round after round, the GEMM micro-benchmarks at each case's two GEMM shapes
(bench/sgemm_bench.cc: dnnl_sgemm and an f32 matmul primitive, the faster taken) with
`recur-run --perf` of the suite case on the oneDNN provider, so that both see the same load.
Each side keeps its best round (the least disturbed). The ceiling time of a run is the
recurrent GEMM at its rate (M = N, per step) plus the input projection at its rate over all T
steps at once (M = T*N, the most favourable way to run it); the fraction is that time over the
run's. An LSTM step costs 2*N*4H*(I+H) FLOPs (3H for GRU)."""
import argparse
import json
import os
import re
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))
CASES = {  # T, N, I, H, gates
    "lstm_large": (100, 64, 1024, 1024, 4),
    "lstm_med": (100, 32, 256, 512, 4),
    "gru_lbr1": (100, 32, 256, 512, 3),
}


def gemm_rate(bench, m, k, n, threads):
    pat = "BM_(Sgemm|MatmulF32)/M:%d/K:%d/N:%d/threads:%d/" % (m, k, n, threads)
    out = subprocess.run([bench, "--benchmark_filter=" + pat, "--benchmark_min_time=0.2",
                          "--benchmark_format=json"], capture_output=True, text=True).stdout
    rates = [b["FLOP/s"] for b in json.loads(out)["benchmarks"]]
    return max(rates)


def rnn_ms(recur_run, model, threads, precision):
    out = subprocess.run([recur_run, model, "--random-inputs", "--providers", "onednn",
                          "--threads", str(threads), "--precision", precision, "--perf",
                          "--json", "--warmup", "2", "--repeat", "5"],
                         capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])["latency_ms"]["min"]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--precision", default="fp32")
    ap.add_argument("--suite-dir", default=os.path.expanduser("~/.cache/recur-bench/suite"))
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    a = ap.parse_args()
    bench = os.path.join(a.build, "bench", "recur_microbench")
    recur_run = os.path.join(a.build, "tools", "recur-run")
    print("| case | GFLOP | best run ms (rounds' range) | GFLOP/s | recurrent GEMM GFLOP/s | "
          "input GEMM (all T) GFLOP/s | ceiling ms | fraction of ceiling |")
    print("|---|---|---|---|---|---|---|---|")
    for case, (T, N, I, H, G) in CASES.items():
        runs, rec, inp = [], [], []
        for _ in range(a.rounds):
            rec.append(gemm_rate(bench, N, H, G * H, a.threads))
            inp.append(gemm_rate(bench, T * N, I, G * H, a.threads))
            runs.append(rnn_ms(recur_run, os.path.join(a.suite_dir, case, "model.onnx"),
                               a.threads, a.precision))
        f_rec, f_in = 2.0 * T * N * G * H * H, 2.0 * T * N * G * H * I
        ceiling_s = f_rec / max(rec) + f_in / max(inp)
        best = min(runs) / 1e3
        print("| %s | %.2f | %.1f (%.1f-%.1f) | %.1f | %.1f | %.1f | %.1f | %.0f%% |" % (
            case, (f_rec + f_in) / 1e9, best * 1e3, min(runs), max(runs),
            (f_rec + f_in) / best / 1e9, max(rec) / 1e9, max(inp) / 1e9, ceiling_s * 1e3,
            100.0 * ceiling_s / best))


if __name__ == "__main__":
    main()
