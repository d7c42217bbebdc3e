#!/usr/bin/env bash
# Regenerates tests/conformance/<suite>.txt from a run of the ONNX backend test suites: one
# line per failing test with its first failure reason. Review the diff before committing: the
# lists may only shrink unless a failure is understood.
# Usage: tools/update_expected_failures.sh [build-dir]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
data=/usr/share/libonnx-testdata/data
for suite in node pytorch-converted pytorch-operator simple; do
  out=tests/conformance/$suite.txt
  log=$(mktemp)
  "$build/tools/recur-run" --suite "$data/$suite" --providers reference >"$log" || true
  {
    echo "# Tests of $data/$suite that recur is known to fail, with the first reason."
    echo "# Regenerate with tools/update_expected_failures.sh; the conformance CTest fails when"
    echo "# a test outside this list fails or a listed test passes."
    { grep '^FAIL ' "$log" || true; } | sed -E 's/^FAIL ([^:]+): (.*)$/\1  \2/' |
      sed -E 's#/usr/share/libonnx-testdata/data/[^ ]*/model.onnx: ##' | cut -c1-240
  } >"$out"
  echo "$suite: $(tail -1 "$log")"
  rm -f "$log"
done
