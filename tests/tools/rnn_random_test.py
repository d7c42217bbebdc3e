#!/usr/bin/python3
"""Random LSTM, GRU and RNN nodes against the float64 oracle (CTest rnn/random-oracle): 1000
cases from tools/gen_rnn_random_cases.py (a fixed seed, so a failure reproduces), each run by
recur-run with the default providers, the reference provider alone and oneDNN in front of it.
The fixed cases in tests/data/rnn list one feature at a time; these mix them (clip with
sequence_lens and peepholes in both directions, input_forget with initial states, lengths of 0
and T, explicit activations with their alpha and beta, outputs left out).

  RECUR_RUN=build/tools/recur-run /usr/bin/python3 tests/tools/rnn_random_test.py
"""
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RECUR_RUN = os.environ.get("RECUR_RUN", os.path.join(ROOT, "build", "tools", "recur-run"))
COUNT = 1000
SEED = 3


def main():
    with tempfile.TemporaryDirectory(prefix="rnn-random-") as d:
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "tools", "gen_rnn_random_cases.py"),
                        "--out", d, "--count", str(COUNT), "--seed", str(SEED)], check=True)
        providers = [[], ["--providers", "reference"]]
        listed = subprocess.run([RECUR_RUN, "--list-providers"], capture_output=True, text=True)
        if re.search(r"^onednn: available", listed.stdout, re.M):
            providers.append(["--providers", "onednn,reference"])
        failed = False
        for extra in providers:
            p = subprocess.run([RECUR_RUN, "--suite", d] + extra, capture_output=True, text=True)
            tail = (p.stdout.strip().splitlines() or ["(no output)"])[-1]
            print("%s: %s" % (" ".join(extra) or "default providers", tail))
            if p.returncode != 0 or tail != "%d passed, 0 failed" % COUNT:
                failed = True
                for line in p.stdout.splitlines():
                    if line.startswith("FAIL"):
                        print("  " + line)
                print(p.stderr[-2000:], file=sys.stderr)
        return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
