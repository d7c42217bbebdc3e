#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tools/install-deps.sh
# The ONNX 1.17 and 1.20 backend suites run when this can fetch them; otherwise it says so and
# the 1.12 suites run alone.
tools/fetch-onnx-testdata.sh 1.17 | tail -1
tools/fetch-onnx-testdata.sh 1.20 | tail -1
tools/build.sh "$@"
built=$(date +%s)
ctest --test-dir build --output-on-failure -j"$(nproc)"
tested=$(date +%s)
# The fuzz regressions replay in the CTests above (fuzz/*). This is a 60-second fuzz smoke run
# over the four harnesses from the in-tree seeds: it builds build-fuzz/ with clang (cached by
# ccache after the first time) and says so and skips where clang-14 is missing.
RECUR_FUZZ_SEEDS=small tools/fuzz.sh 60
end=$(date +%s)
echo "build: $((built - start)) s, tests: $((tested - built)) s, fuzz smoke: $((end - tested)) s"
