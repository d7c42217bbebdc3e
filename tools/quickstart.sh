#!/usr/bin/env bash
# Installs what is missing, builds recur (Release), and runs a shipped model: where each node
# runs and why, its outputs (checked against PyTorch's), and its load time and latency.
# Usage: tools/quickstart.sh [models/<name>]   (default: the character LSTM language model)
set -euo pipefail
cd "$(dirname "$0")/.."
tools/install-deps.sh
tools/build.sh
model=${1:-models/char_lstm_lm}
echo "== recur-run $model --explain"
build/tools/recur-run "$model" --explain
echo "== recur-run $model --perf"
build/tools/recur-run "$model" --perf --warmup 3 --repeat 20
