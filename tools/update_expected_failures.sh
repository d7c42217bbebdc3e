#!/usr/bin/env bash
# Regenerates the conformance expected-failure lists from a run of the ONNX backend test
# suites: one line per failing test with its first failure reason. An entry already in a list
# keeps the reason it was first recorded with. Review the diff before committing: the lists
# may only shrink unless a failure is understood.
# Usage: tools/update_expected_failures.sh [build-dir] [1.12|1.17|1.20]
#   1.12: /usr/share/libonnx-testdata/data -> tests/conformance/<suite>.txt
#   1.17, 1.20: the cache of tools/fetch-onnx-testdata.sh -> tests/conformance/<version>/<suite>.txt
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
version=${2:-1.12}
if [[ "$version" == 1.12 ]]; then
  data=/usr/share/libonnx-testdata/data
  dir=tests/conformance
else
  data=$(tools/fetch-onnx-testdata.sh "$version" | tail -1)
  [[ -d "$data/node" ]] || { echo "no ONNX $version test data: $data"; exit 1; }
  dir=tests/conformance/$version
  mkdir -p "$dir"
fi
for suite in node pytorch-converted pytorch-operator simple; do
  out=$dir/$suite.txt
  log=$(mktemp)
  new=$(mktemp)
  "$build/tools/recur-run" --suite "$data/$suite" --providers reference >"$log" || true
  { grep '^FAIL ' "$log" || true; } | sed -E 's/^FAIL ([^:]+): (.*)$/\1  \2/' |
    sed -E "s#$data/[^ ]*/model.onnx: ##" | cut -c1-240 >"$new"
  {
    echo "# Tests of the ONNX $version backend suite '$suite' that recur is known to fail, with"
    echo "# the first reason. Regenerate with tools/update_expected_failures.sh; the conformance"
    echo "# CTest fails when a test outside this list fails or a listed test passes."
    while IFS= read -r line; do
      name=${line%%  *}
      old=$( { grep -E "^$name  " "$out" 2>/dev/null || true; } | head -1)
      echo "${old:-$line}"
    done <"$new"
  } >"$out.tmp"
  mv "$out.tmp" "$out"
  echo "$version $suite: $(tail -1 "$log")"
  rm -f "$log" "$new"
done
