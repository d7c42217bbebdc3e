#!/usr/bin/env bash
# Builds recur with ThreadSanitizer in build-tsan/ and runs the concurrency tests under it;
# exits nonzero on any report (or test failure). Extra arguments go to cmake's configure step.
#
# Debian's oneDNN runs its primitives on OpenMP (libgomp), whose synchronisation TSan cannot
# see: every parallel region would report races between libgomp's threads. OMP_THREAD_LIMIT=1
# keeps every OpenMP team at one thread, so libgomp starts no thread, while the sessions still
# ask for 2 threads and so run batch splits and directions on recur's own job pool, which is
# what the tests are for.
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
export OMP_NUM_THREADS=1 OMP_THREAD_LIMIT=1
export TSAN_OPTIONS="suppressions=$PWD/tools/tsan.supp halt_on_error=1 exitcode=66 ${TSAN_OPTIONS:-}"
build-tsan/tests/recur_concurrency_tests "${GTEST_ARGS[@]}"
