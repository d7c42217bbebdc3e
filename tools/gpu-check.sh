#!/usr/bin/env bash
# What runs on the lent GPU machine, from the repository root, with .gpu-bundle/ carried
# (built by tools/gpu-bundle.sh). Writes everything under $OUT (default: out/):
#   nvidia-smi.txt, providers.txt, unit.txt + gtest.xml (the cudnn tests, GPU ones included),
#   suite.txt (tests/data/rnn with cudnn first), bench.json + bench.md (tools/gpu_bench.py).
# Exit status: 0 when the tests and the suite pass.
set -uo pipefail
cd "$(dirname "$0")/.."
B=$PWD/.gpu-bundle
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
status=0

{ date -u; nvidia-smi; } > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt"

# cuDNN (and cuBLAS, cudart, nvrtc) from the PyTorch wheel's nvidia-* packages, then the toolkit.
libdirs=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
dirs = []
for r in roots:
    for d in sorted(glob.glob(os.path.join(r, "*", "lib"))):
        dirs.append(d)
print(":".join(dirs))
PY
)
LIBS="$B/lib:${libdirs}:/usr/local/cuda/lib64"
run() { env LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" "$@"; }
export RECUR_TEST_DATA_DIR=$PWD/tests/data

echo "LD_LIBRARY_PATH for recur: $LIBS" | tee "$OUT/env.txt"
run "$B/bin/recur-run" --list-providers 2>&1 | tee "$OUT/providers.txt"

run "$B/bin/recur_unit_tests" --gtest_filter='Cudnn*' --gtest_output="xml:$OUT/gtest.xml" \
  > "$OUT/unit.txt" 2>&1 || status=1
tail -n 40 "$OUT/unit.txt"

# The oracle suite with cudnn first: claimed cases run on the GPU, the rest on the CPU.
run "$B/bin/recur-run" --suite tests/data/rnn --providers cudnn,reference \
  > "$OUT/suite.txt" 2>&1 || status=1
tail -n 3 "$OUT/suite.txt"

RECUR_LD_LIBRARY_PATH="$LIBS" python3 tools/gpu_bench.py --recur "$B/bin/recur-run" \
  --out "$OUT" 2>&1 | tee "$OUT/bench.log"
exit $status
