#!/usr/bin/env bash
# Installs what is missing, builds recur (Release), and runs a shipped model: its outputs
# checked against the expected ones, its timing, and where each node runs.
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
model=${1:-models/lstm_basic}
echo "== recur-run $model --explain"
build/tools/recur-run "$model" --explain
echo "== recur-run $model --perf"
build/tools/recur-run "$model" --perf --warmup 3 --repeat 20
