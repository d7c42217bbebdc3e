#!/usr/bin/env bash
# Builds recur for the lent GPU machine (Release, sm_90, CUDA provider on) in build-gpu/ and
# gathers into .gpu-bundle/ (gitignored, < 64 MiB) what tools/gpu-check.sh runs there: the
# binaries, the GPU providers' module librecur_cuda.so (in lib/, where the binaries in bin/
# look for it: bin/../lib) and the Debian shared libraries they load that the GPU machine
# lacks (libonnx, libprotobuf, libdnnl, ...). The models, test data and scripts travel with the working tree.
# CUDA, cuDNN and cuBLAS are not bundled: the GPU machine has its own (CUDA 13, and cuDNN in
# PyTorch's wheel).
#
# Usage: tools/gpu-bundle.sh [extra cmake arguments]
# Then:  run(command="bash tools/gpu-check.sh", carry=[".gpu-bundle"])
set -euo pipefail
cd "$(dirname "$0")/.."
# RECUR_GPU_BUILD_DIR reuses a build folder already configured this way (Release, sm_90).
BUILD=${RECUR_GPU_BUILD_DIR:-build-gpu}
extra=()
[[ -f providers/onednn/CMakeLists.txt ]] || extra+=(-DRECUR_WITH_ONEDNN=OFF)
cmake -S . -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
  -DRECUR_WITH_CUDA=ON -DRECUR_BUILD_BENCH=OFF "${extra[@]}" "$@" >/dev/null
ninja -C "$BUILD" -j"${RECUR_JOBS:-2}" recur-run recur_unit_tests recur_cuda

rm -rf .gpu-bundle
mkdir -p .gpu-bundle/bin .gpu-bundle/lib
cp "$BUILD/tools/recur-run" "$BUILD/tests/recur_unit_tests" .gpu-bundle/bin/
cp "$BUILD/lib/librecur_cuda.so" .gpu-bundle/lib/
strip --strip-unneeded .gpu-bundle/bin/* .gpu-bundle/lib/librecur_cuda.so

# Every library the binaries resolve from the system's lib folders, except the C library
# family (the GPU machine's own glibc must be used) and the CUDA libraries.
for bin in .gpu-bundle/bin/* .gpu-bundle/lib/librecur_cuda.so; do
  ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  base=$(basename "$lib")
  case "$base" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) continue ;;
    libcuda*|libcudart*|libcudnn*|libcublas*|libnvrtc*|libnvJitLink*) continue ;;
  esac
  case "$lib" in /usr/local/cuda*) continue ;; esac
  [[ -e .gpu-bundle/lib/$base ]] || cp -L "$lib" .gpu-bundle/lib/
done

git rev-parse HEAD > .gpu-bundle/COMMIT 2>/dev/null || true
size=$(du -sm .gpu-bundle | cut -f1)
echo "gpu bundle: .gpu-bundle, ${size} MiB ($(ls .gpu-bundle/lib | wc -l) libraries)"
if (( size >= 64 )); then
  echo "gpu bundle is over the 64 MiB a run may carry" >&2
  exit 1
fi
