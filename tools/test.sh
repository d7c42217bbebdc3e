#!/usr/bin/env bash
# Installs what is missing, builds, and runs the whole test suite (CTest).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tools/install-deps.sh
# The ONNX 1.17 backend suites run when this can fetch them; otherwise it says so and the
# 1.12 suites run alone.
tools/fetch-onnx-testdata.sh | tail -1
tools/build.sh "$@"
built=$(date +%s)
ctest --test-dir build --output-on-failure -j"$(nproc)"
end=$(date +%s)
echo "build: $((built - start)) s, tests: $((end - built)) s"
