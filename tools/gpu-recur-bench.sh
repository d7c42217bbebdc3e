#!/usr/bin/env bash
# recur-bench on the lent GPU machine, with .gpu-bundle/ carried (tools/gpu-bundle.sh builds it):
# the standard suite on every recur provider (cudnn, cuda-generic, onednn, reference), ONNX
# Runtime CPU (the Python onnxruntime module: the GPU machine has no Node) and PyTorch on the GPU
# (single-node cases, TF32 off), then a batch sweep of models/char_lstm_lm. Writes under $OUT:
# suite.json/.md/.png, sweep.json/.md/.png and the logs.
#   run(command="bash tools/gpu-recur-bench.sh", carry=[".gpu-bundle"])
# Extra arguments go to both recur-bench runs (e.g. --threads 1 --rounds 2).
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/gpu-env.sh
export RECUR_LD_LIBRARY_PATH="$LIBS"
status=0
python3 tools/recur-bench --suite standard --recur-run "$B/bin/recur-run" --no-install \
  --json "$OUT/suite.json" --markdown "$OUT/suite.md" --plot "$OUT/suite.png" "$@" \
  > "$OUT/suite.txt" 2> "$OUT/suite.log" || status=1
cat "$OUT/suite.txt"
python3 tools/recur-bench models/char_lstm_lm --sweep batch=1,4,16,64,256 seq=10,100 \
  --recur-run "$B/bin/recur-run" --no-install --json "$OUT/sweep.json" \
  --markdown "$OUT/sweep.md" --plot "$OUT/sweep.png" "$@" \
  > "$OUT/sweep.txt" 2> "$OUT/sweep.log" || status=1
cat "$OUT/sweep.txt"
pack_out gpu-recur-bench
exit $status
