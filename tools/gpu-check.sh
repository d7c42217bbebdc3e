#!/usr/bin/env bash
# What runs on the lent GPU machine, from the repository root, with .gpu-bundle/ carried
# (built by tools/gpu-bundle.sh). Writes everything under $OUT (default: out/):
#   nvidia-smi.txt, providers.txt, unit.txt + gtest.xml (the cudnn and cuda-generic tests, GPU
#   ones included: cuda-generic parity on 256 random configurations, the oracle suite, every
#   model with --providers cudnn,cuda-generic, fusion on/off, CUDA graphs on/off),
#   suite.txt (tests/data/rnn with cudnn first), suite-generic.txt (tests/data/rnn on
#   cuda-generic alone), models.txt and models-nofusion.txt (models/ with only the GPU
#   providers listed), explain-*.txt, bench.json + bench.md (tools/gpu_bench.py).
# Exit status: 0 when the tests and the suite pass.
# PART=tests or PART=bench runs one half (each fits a 10-minute run call more surely than both).
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
# The binaries open the GPU providers from $B/lib/librecur_cuda.so (bin/../lib); the list says
# why where that fails (module missing, a CUDA library missing, no driver).
run "$B/bin/recur-run" --list-providers 2>&1 | tee "$OUT/providers.txt"

export RECUR_MODELS_DIR=$PWD/models
PART=${PART:-all}
if [[ $PART != bench ]]; then
run "$B/bin/recur_unit_tests" \
  --gtest_filter='CublasApi*:Cudnn*:CudaGeneric*:GenericRnnCpu*:GlueOpsCpu*:StackedRnn*:ShapeSubgraph*' \
  --gtest_output="xml:$OUT/gtest.xml" > "$OUT/unit.txt" 2>&1 || status=1
tail -n 40 "$OUT/unit.txt"

# The models with no CPU provider listed, fusion on (auto) and off.
run "$B/bin/recur-run" --suite models --providers cudnn,cuda-generic > "$OUT/models.txt" 2>&1 \
  || status=1
tail -n 3 "$OUT/models.txt"
run "$B/bin/recur-run" --suite models --providers cudnn,cuda-generic --fusion off \
  > "$OUT/models-nofusion.txt" 2>&1 || status=1
tail -n 3 "$OUT/models-nofusion.txt"
for m in char_lstm_lm packed_bilstm_tagger crnn; do
  run "$B/bin/recur-run" models/$m --explain --providers cudnn,cuda-generic \
    > "$OUT/explain-$m.txt" 2>&1 || status=1
done
run "$B/bin/recur-run" --suite tests/data/rnn --providers cuda-generic \
  > "$OUT/suite-generic.txt" 2>&1 || status=1
tail -n 3 "$OUT/suite-generic.txt"

# The oracle suite with cudnn first: claimed cases run on the GPU, the rest on the CPU.
run "$B/bin/recur-run" --suite tests/data/rnn --providers cudnn,reference \
  > "$OUT/suite.txt" 2>&1 || status=1
tail -n 3 "$OUT/suite.txt"

fi
if [[ $PART != tests ]]; then
RECUR_LD_LIBRARY_PATH="$LIBS" python3 tools/gpu_bench.py --recur "$B/bin/recur-run" \
  --out "$OUT" 2>&1 | tee "$OUT/bench.log"
fi
exit $status
