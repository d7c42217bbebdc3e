#!/usr/bin/env bash
# Installs the Debian packages recur needs, if any is missing. Safe to run repeatedly.
# Usage: tools/install-deps.sh [--bench]   (--bench adds what the benchmark plots need)
# python3-numpy and python3-onnx: recur-bench and its CTest (tools/recur-bench) need them.
# universal-ctags: the function-length check (tools/checks/long_functions.py).
# libcli11-dev, nlohmann-json3-dev: recur-run's command line and JSON output (header-only).
# pybind11-dev, python3-dev: the Python module (python/); python3-setuptools, python3-wheel and
# python3-pip: `pip install ./python` offline (docs/embedding.md).
# clang-14 and libclang-rt-14-dev: libFuzzer for the fuzz smoke run in tools/test.sh (tools/fuzz.sh).
set -euo pipefail
pkgs=(cmake g++ ninja-build pkg-config libonnx-dev libprotobuf-dev protobuf-compiler libdnnl-dev
      libgtest-dev libgmock-dev libbenchmark-dev libonnx-testdata python3-numpy python3-onnx
      universal-ctags libcli11-dev nlohmann-json3-dev pybind11-dev python3-dev python3-setuptools
      python3-wheel python3-pip clang-14 libclang-rt-14-dev)
if [[ "${1:-}" == "--bench" ]]; then
  pkgs+=(python3-matplotlib python3-numpy nodejs npm)
fi
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}"
  sudo_cmd=""
  [[ $(id -u) -ne 0 ]] && sudo_cmd="sudo"
  $sudo_cmd apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo_cmd apt-get install -y -qq "${missing[@]}"
fi
