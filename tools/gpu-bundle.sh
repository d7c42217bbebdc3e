#!/usr/bin/env bash
# Builds recur for the lent GPU machine (Release, sm_90, CUDA provider on) in build-gpu/ and
# packs into .gpu-bundle/ (gitignored) what tools/gpu-check.sh runs there: the binaries, the
# GPU providers' module librecur_cuda.so (in lib/, where the binaries in bin/ look for it:
# bin/../lib) and the Debian shared libraries they load that the GPU machine lacks (libonnx,
# libprotobuf, libdnnl, ...), as bundle.tar.xz; tools/gpu-env.sh unpacks it there. The models,
# test data and scripts travel with the working tree. CUDA, cuDNN and cuBLAS are not bundled:
# the GPU machine has its own (CUDA 13, and cuDNN in PyTorch's wheel).
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

# Staged uncompressed in $BUILD/bundle, then carried as .gpu-bundle/bundle.tar.xz: the run call
# carries at most 64 MiB with the working tree, and libdnnl alone is 40 MB.
S=$BUILD/bundle
rm -rf "$S" .gpu-bundle
mkdir -p "$S/bin" "$S/lib" .gpu-bundle
cp "$BUILD/tools/recur-run" "$BUILD/tests/recur_unit_tests" "$S/bin/"
cp "$BUILD/lib/librecur_cuda.so" "$S/lib/"
strip --strip-unneeded "$S"/bin/* "$S/lib/librecur_cuda.so"

# Every library the binaries resolve from the system's lib folders, except the C library
# family (the GPU machine's own glibc must be used) and the CUDA libraries.
for bin in "$S"/bin/* "$S/lib/librecur_cuda.so"; do
  ldd "$bin" | awk '/=> \// {print $3}'
done | sort -u | while read -r lib; do
  base=$(basename "$lib")
  case "$base" in
    libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libresolv.so*) continue ;;
    libcuda*|libcudart*|libcudnn*|libcublas*|libnvrtc*|libnvJitLink*) continue ;;
  esac
  case "$lib" in /usr/local/cuda*) continue ;; esac
  # The C++ runtime goes to lib-fallback/, used only where the GPU machine has none: a newer one
  # there serves these binaries too, while this older one first on the path could starve the
  # machine's own libraries (cuDNN, cuBLAS) of symbol versions they need.
  dir=lib
  case "$base" in libstdc++.so*|libgcc_s.so*) dir=lib-fallback ;; esac
  mkdir -p "$S/$dir"
  [[ -e $S/$dir/$base ]] || cp -L "$lib" "$S/$dir/"
done

git rev-parse HEAD > .gpu-bundle/COMMIT 2>/dev/null || true
cp .gpu-bundle/COMMIT "$S/" 2>/dev/null || true
tar -C "$S" -cf - bin lib lib-fallback | xz -T"${RECUR_JOBS:-2}" -6 > .gpu-bundle/bundle.tar.xz

# What a run call sends: tracked and untracked-not-ignored files, plus the carried bundle.
tree=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null \
  | awk '{s += $1} END {print s + 0}')
packed=$(stat -c %s .gpu-bundle/bundle.tar.xz)
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }
echo "gpu bundle: .gpu-bundle/bundle.tar.xz, $(mib "$packed") MiB ($(du -sm "$S" | cut -f1) MiB" \
  "unpacked, $(ls "$S/lib" | wc -l) libraries); with the working tree $(mib $((tree + packed))) MiB"
if (( tree + packed >= 60 * 1048576 )); then
  echo "the working tree and the bundle come near the 64 MiB a run call may carry" >&2
  exit 1
fi
