# Sourced by the scripts that run on the lent GPU machine (tools/gpu-check.sh,
# tools/gpu-recur-bench.sh), from the repository root. Sets:
#   B     the unpacked bundle (.gpu-bundle: bin/, lib/), unpacked here from bundle.tar.xz;
#   OUT   where results go (default out/), with nvidia-smi.txt written;
#   LIBS  the library path for recur's binaries: the bundle's lib/, then cuDNN, cuBLAS, cudart
#         and nvrtc from the PyTorch wheel's nvidia-* packages, then the toolkit (and the
#         bundle's lib-fallback/ where the machine has no C++ runtime).
# The bundle travels compressed because the uncompressed one (libdnnl alone is 40 MB) would not
# fit, with the working tree, in the 64 MiB a run call carries.
B=$PWD/.gpu-bundle
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
if [[ ! -x $B/bin/recur-run ]]; then
  if [[ ! -f $B/bundle.tar.xz ]]; then
    echo "no GPU bundle: run tools/gpu-bundle.sh on the CPU machine and carry .gpu-bundle" >&2
    exit 2
  fi
  # tar needs xz(1) for -J; Python's tarfile needs nothing beyond the standard library.
  tar -C "$B" -xJf "$B/bundle.tar.xz" 2>/dev/null \
    || python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' \
      "$B/bundle.tar.xz" "$B" \
    || { echo "could not unpack $B/bundle.tar.xz" >&2; exit 2; }
fi

{ date -u; echo "bundle commit: $(cat "$B/COMMIT" 2>/dev/null)"; nvidia-smi; } \
  > "$OUT/nvidia-smi.txt" 2>&1
cat "$OUT/nvidia-smi.txt"

libdirs=$(python3 - <<'PY' 2>/dev/null
import glob, os
try:
    import nvidia
    roots = list(nvidia.__path__)
except Exception:
    roots = []
print(":".join(d for r in roots for d in sorted(glob.glob(os.path.join(r, "*", "lib")))))
PY
)
LIBS="$B/lib${libdirs:+:$libdirs}:/usr/local/cuda/lib64"
# The bundled C++ runtime only where the machine lacks one (tools/gpu-bundle.sh says why).
ld_cache=$(ldconfig -p 2>/dev/null || true)
for lib in libstdc++.so.6 libgcc_s.so.1; do
  if [[ $ld_cache != *"$lib "* ]]; then
    LIBS="$LIBS:$B/lib-fallback"
    break
  fi
done

# Only 8 files come back from $OUT per run call: pack_out NAME leaves $OUT holding NAME.tar.gz
# with everything written there, and bench.md beside it when there is one.
pack_out() {
  local tgz=/tmp/$1.tar.gz
  tar -C "$OUT" -czf "$tgz" . || return 1
  [[ -f $OUT/bench.md ]] && cp "$OUT/bench.md" /tmp/"$1"-bench.md
  find "$OUT" -mindepth 1 -delete
  mv "$tgz" "$OUT/"
  [[ -f /tmp/$1-bench.md ]] && mv /tmp/"$1"-bench.md "$OUT/bench.md"
  echo "results: \$OUT/$1.tar.gz"
}
