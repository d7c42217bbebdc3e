#!/usr/bin/env bash
# clang-format over every tracked C++ and CUDA source, with the style in .clang-format.
#   tools/format.sh          report the files that differ (exit 1 if any)
#   tools/format.sh --fix    rewrite them
set -euo pipefail
cd "$(dirname "$0")/.."
command -v clang-format >/dev/null || { echo "format.sh: clang-format is not installed (apt-get install clang-format)" >&2; exit 2; }
mapfile -t files < <(git ls-files '*.cc' '*.h' '*.cu' '*.cuh')
if [[ ${1:-} == --fix ]]; then
  clang-format -i "${files[@]}"
  exit 0
fi
bad=$(clang-format --dry-run "${files[@]}" 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: warning' | cut -d: -f1 | sort -u || true)
if [[ -n $bad ]]; then
  echo "not clang-format clean (tools/format.sh --fix rewrites them):"
  echo "$bad"
  exit 1
fi
echo "clang-format clean: ${#files[@]} files"
