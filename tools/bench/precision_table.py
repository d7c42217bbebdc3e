#!/usr/bin/python3
"""The accuracy table of docs/precision.md: each backend-test folder (the RNN feature cases in
tests/data/rnn and the models in models/) run at a reduced CPU precision on the folder's own
inputs, against fp32 on the same providers and against the folder's expected outputs.

  /usr/bin/python3 tools/bench/precision_table.py [--precision bf16] [--recur-run PATH] DIR...

Per case: how many RNN nodes took the precision (from --explain), the largest max|got - fp32|
over the outputs (recur-run --compare-fp32), the same divided by max|fp32| (the error at the
outputs' scale), and max|got - expected| against the folder's expected outputs (the reference
provider's, or PyTorch's in float64 for models/). Prints a Markdown table."""
import argparse
import glob
import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.realpath(__file__))))


def run(cmd):
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def vs_fp32(recur_run, folder, precision):
    """(nodes that took the precision, nodes noted, max abs err, max abs err / max |fp32|)."""
    rc, out, err = run([recur_run, folder, "--precision", precision, "--compare-fp32", "--json",
                        "--explain", "--rtol", "1e9", "--atol", "1e9"])
    if rc != 0:
        return None, (err or out).strip().splitlines()[-1:]
    j = json.loads(out.strip().splitlines()[-1])
    took = out.count("note: precision %s" % precision)
    noted = took + out.count("note: precision fp32")
    e = max((o["max_abs_err"] for o in j["outputs"]), default=0.0)
    scale = max((o["fp32_max_abs"] for o in j["outputs"]), default=0.0)
    return (took, noted, e, e / scale if scale > 0 else 0.0), None


def vs_expected(recur_run, folder, precision):
    """max abs err against the folder's expected outputs (recur-run's own comparison)."""
    rc, out, err = run([recur_run, folder, "--precision", precision, "--rtol", "1e9",
                        "--atol", "1e9"])
    if rc != 0:
        return None
    errs = [float(m) for m in re.findall(r"max abs err ([0-9.eE+-]+)", out)]
    return max(errs, default=0.0)


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("dirs", nargs="*")
    ap.add_argument("--precision", default="bf16")
    ap.add_argument("--recur-run", default=os.path.join(ROOT, "build", "tools", "recur-run"))
    a = ap.parse_args()
    dirs = a.dirs or sorted(glob.glob(os.path.join(ROOT, "tests", "data", "rnn", "*"))) + sorted(
        d for d in glob.glob(os.path.join(ROOT, "models", "*")) if os.path.isdir(d))
    print("| case | nodes in %s | max abs vs fp32 | at scale (abs / max abs fp32) | "
          "max abs vs expected |" % a.precision)
    print("|---|---|---|---|---|")
    for d in dirs:
        name = os.path.relpath(d, ROOT)
        r, why = vs_fp32(a.recur_run, d, a.precision)
        if r is None:
            print("| %s | error: %s | | | |" % (name, " ".join(why)))
            continue
        took, noted, e_f, s_f = r
        e_x = vs_expected(a.recur_run, d, a.precision)
        print("| %s | %d of %d | %.2e | %.2e | %s |" % (
            name, took, noted, e_f, s_f, "error" if e_x is None else "%.2e" % e_x))
        sys.stdout.flush()

if __name__ == "__main__":
    main()
