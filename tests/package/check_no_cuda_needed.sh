#!/usr/bin/env bash
# Fails if any given binary records a CUDA library (libcuda, libcudart, libcudnn, libcublas)
# as NEEDED: in a CUDA build those belong to librecur_cuda.so, opened only when a GPU
# provider is asked for, so that librecur.so and the tools start on machines without CUDA.
# Usage: check_no_cuda_needed.sh BINARY...
set -euo pipefail
status=0
for bin in "$@"; do
  needed=$(readelf -d "$bin" | awk '/\(NEEDED\)/ {print $NF}' | tr -d '[]')
  echo "$bin NEEDED: $(echo $needed)"
  if grep -E '^lib(cuda|cudart|cudnn|cublas|nvrtc)' <<<"$needed"; then
    echo "$bin links a CUDA library" >&2
    status=1
  fi
done
exit $status
