#!/usr/bin/env bash
# Builds recur with ThreadSanitizer in build-tsan/ and runs the concurrency tests under it;
# exits nonzero on any report (or test failure). Extra arguments go to cmake's configure step.
#
# Debian's oneDNN runs its primitives on OpenMP (libgomp). OMP_NUM_THREADS=1 keeps libgomp's
# default teams at one thread; the tests' sessions ask for 2 threads, so batch splits, directions
# and the row team run on recur's job pool (in this build on threads of its own rather than
# libgomp's, whose fork and join TSan cannot see: job_pool.cc), and the few plans chosen with
# OpenMP threads get a team of 2 (TSan reported nothing inside libgomp or libdnnl so far, so
# tools/tsan.supp is empty). Do not set OMP_THREAD_LIMIT=1 instead: oneDNN then runs
# primitives created for 2 threads on a team of 1, and their results change from run to run
# (models/char_lstm_lm).
#
# GTEST_FILTER narrows the tests (a gtest filter); JOBS sets the build's parallelism (2).
set -euo pipefail
GTEST_ARGS=()
[[ -n ${GTEST_FILTER:-} ]] && GTEST_ARGS+=("--gtest_filter=$GTEST_FILTER")
cd "$(dirname "$0")/.."
cmake -S . -B build-tsan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DRECUR_SANITIZE=thread \
  -DRECUR_WITH_CUDA=OFF -DRECUR_BUILD_BENCH=OFF "$@" >/dev/null
cmake --build build-tsan -j"${JOBS:-2}" --target recur_concurrency_tests

# recur_concurrency_tests (tests/CMakeLists.txt) holds the test files that run sessions from
# several threads; their other tests run too, single-threaded, at little cost.
export OMP_NUM_THREADS=1
export TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
build-tsan/tests/recur_concurrency_tests "${GTEST_ARGS[@]}"
