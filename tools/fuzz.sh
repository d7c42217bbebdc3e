#!/usr/bin/env bash
# Builds the libFuzzer harnesses (build-fuzz/, clang-14, ASan + UBSan) and runs each in turn for
# a share of SECONDS (default 60), one process at a time. docs/fuzzing.md has the details.
# Usage: tools/fuzz.sh [SECONDS] [HARNESS...]     e.g. tools/fuzz.sh 3600 npy tensor_proto
# Environment: RECUR_FUZZ_SEEDS=small starts from the in-tree seeds only (not the ONNX suites),
# which is what the CI smoke run does; RECUR_FUZZ_ARGS adds libFuzzer flags;
# RECUR_FUZZ_ONEDNN=1 builds build-fuzz-onednn/ with the oneDNN provider and runs the model
# harnesses on it, checking every output against the reference provider's (docs/fuzzing.md).
# The corpora grow in build-fuzz/corpus/<harness>; crashes land in build-fuzz/artifacts/<harness>/
# and make the script exit 1. Each found crash becomes a file in tests/fuzz_regressions/<harness>/.
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-60}
shift || true
harnesses=("$@")
((${#harnesses[@]})) || harnesses=(npy tensor_proto model_parse model rnn_model)
if ! command -v clang++-14 >/dev/null; then
  echo "fuzz: clang++-14 not found (apt-get install clang-14 libclang-rt-14-dev); skipping"
  exit 0
fi
root=$PWD
onnx=/usr/share/libonnx-testdata/data
bdir=build-fuzz
onednn=OFF
if [[ ${RECUR_FUZZ_ONEDNN:-0} == 1 ]]; then
  bdir=build-fuzz-onednn
  onednn=ON
  export RECUR_FUZZ_COMPARE=${RECUR_FUZZ_COMPARE:-onednn}
fi
export CMAKE_CXX_COMPILER_LAUNCHER=${CMAKE_CXX_COMPILER_LAUNCHER:-$(command -v ccache || true)}
CC=clang-14 CXX=clang++-14 cmake -S . -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS_RELEASE="-O1 -DNDEBUG" -DRECUR_FUZZ=ON -DRECUR_WITH_CUDA=OFF \
  -DRECUR_WITH_ONEDNN=$onednn -DRECUR_BUILD_TESTS=OFF \
  -DRECUR_BUILD_BENCH=OFF >/dev/null
cmake --build "$bdir" -j"$(nproc)" --target "${harnesses[@]/#/fuzz_}"

# Seeds: copies of the matching files under a harness's seed folders, named by their path, so
# that libFuzzer reads exactly those (it would otherwise read every file of a test folder).
# $1 harness, $2 file-name pattern, then the folders.
collect() {
  local h=$1 pattern=$2 dir
  shift 2
  local out=$bdir/seeds/$h
  rm -rf "$out"
  mkdir -p "$out"
  for dir in "$@"; do
    [[ -d $dir ]] || continue
    find "$dir" -type f -name "$pattern" -size -2M | while read -r f; do
      cp "$f" "$out/$(echo "${f#"$root"/}" | tr '/' '_')"
    done
  done
}
seeds_for() {
  local small=${RECUR_FUZZ_SEEDS:-full}
  case $1 in
    npy) collect npy '*.npy' fuzz/seeds/npy tests/fuzz_regressions/npy ;;
    tensor_proto)
      if [[ $small == small ]]; then
        collect tensor_proto '*.pb' tests/data/rnn tests/fuzz_regressions/tensor_proto
      else
        collect tensor_proto '*.pb' tests/data models "$onnx" tests/fuzz_regressions/tensor_proto
      fi ;;
    model_parse)
      if [[ $small == small ]]; then
        collect model_parse '*.onnx' models tests/fuzz_regressions/model_parse
      else
        collect model_parse '*.onnx' models tests/data "$onnx" tests/fuzz_regressions/model_parse
      fi ;;
    model)
      if [[ $small == small ]]; then
        collect model '*.onnx' models tests/data/contrib tests/data/qlinear tests/data/nchwc \
          tests/fuzz_regressions/model
      else
        collect model '*.onnx' models tests/data "$onnx" tests/fuzz_regressions/model
      fi ;;
    rnn_model)
      if [[ $small == small ]]; then
        collect rnn_model '*.onnx' models/lstm_basic models/gru_basic tests/data/int8 \
          tests/fuzz_regressions/rnn_model
      else
        collect rnn_model '*.onnx' tests/data/rnn tests/data/int8 models/lstm_basic \
          models/gru_basic \
          "$onnx"/node/test_lstm_* "$onnx"/node/test_gru_* "$onnx"/node/test_rnn_* \
          "$onnx"/node/test_simple_rnn_* tests/fuzz_regressions/rnn_model
      fi ;;
  esac
}

share=$((total / ${#harnesses[@]}))
((share > 0)) || share=1
status=0
for h in "${harnesses[@]}"; do
  seeds_for "$h"
  corpus=$bdir/corpus/$h
  if [[ ${RECUR_FUZZ_SEEDS:-full} == small ]]; then
    # The smoke run starts afresh each time: a corpus grown by long runs takes minutes to load.
    corpus=$bdir/smoke-corpus/$h
    rm -rf "$corpus"
  fi
  mkdir -p "$corpus" "$bdir/artifacts/$h"
  echo "fuzz: $h for ${share}s"
  # -rss_limit_mb / -timeout: an out-of-memory or a hang inside the library is a finding too
  # (docs/fuzzing.md).
  # shellcheck disable=SC2086
  if ! "$bdir/fuzz/fuzz_$h" -max_total_time="$share" -rss_limit_mb=2048 -timeout=20 \
    -print_final_stats=1 -artifact_prefix="$bdir/artifacts/$h/" \
    ${RECUR_FUZZ_ARGS:-} "$corpus" "$bdir/seeds/$h" \
    2>"$bdir/fuzz-$h.log"; then
    echo "fuzz: $h FAILED; see $bdir/fuzz-$h.log and $bdir/artifacts/$h/"
    grep -E "ERROR|SUMMARY|runtime error|recur-fuzz: the providers" "$bdir/fuzz-$h.log" | head -5 || true
    status=1
  fi
  grep -E "DONE|^Done [0-9]+ runs|^stat::peak_rss_mb" "$bdir/fuzz-$h.log" |
    tail -3 || true
done
exit $status
