#!/usr/bin/env bash
# What runs on the lent GPU machine, from the repository root, with .gpu-bundle/ carried
# (built by tools/gpu-bundle.sh, unpacked by tools/gpu-env.sh). Writes everything under $OUT
# (default: out/). PART picks what runs; each part fits one 10-minute run call:
#   tests     nvidia-smi.txt, providers.txt, unit.txt + gtest.xml (the cudnn and cuda-generic
#             tests, GPU ones included: cuda-generic parity on 256 random configurations, the
#             oracle suite, every model with --providers cudnn,cuda-generic, fusion on/off,
#             CUDA graphs on/off), suite.txt (tests/data/rnn with cudnn first), suite-generic.txt
#             (tests/data/rnn on cuda-generic alone), models.txt and models-nofusion.txt (models/
#             with only the GPU providers listed), explain-*.txt;
#   memcheck  memcheck.txt and memcheck-models.txt: the GPU unit tests (MEMCHECK_FILTER, default
#             every *Gpu* test) and the models suite under compute-sanitizer --tool memcheck;
#   bench     bench.json + bench.md (tools/gpu_bench.py; BENCH_ARGS are passed on, e.g.
#             "--sections suite,graphs" or "--sections models,serving");
#   profile   profile.json and trace-*.csv (tools/gpu_profile.py; PROFILE_ARGS are passed on, e.g.
#             "--cases bilstm:float32,lstm_peep:float32"): kernel traces under ncu and the cost
#             of launching (CUDA graphs on and off, recur and PyTorch);
#   all       tests, then bench (the default).
# Everything ends up in $OUT/gpu-$PART.tar.gz (a run call brings back 8 files at most), with
# bench.md beside it. Exit status: 0 when every part run passed.
set -uo pipefail
cd "$(dirname "$0")/.."
source tools/gpu-env.sh
status=0
# Every step has a time limit: STEP_TIMEOUT seconds (default 300), cut to what is left before
# DEADLINE (seconds since the epoch) where one is set; a step past the deadline is skipped.
# Device time is scarce, and a hung step must not keep the others' results from being packed
# and brought back.
limit() {
  local t=${STEP_TIMEOUT:-300}
  if [[ -n ${DEADLINE:-} ]]; then
    local left=$((DEADLINE - $(date +%s)))
    ((left < t)) && t=$left
  fi
  echo "$t"
}
run() {
  local t
  t=$(limit)
  if ((t <= 0)); then
    echo "skipped, past the deadline: $*" >&2
    return 124
  fi
  env LD_LIBRARY_PATH="$LIBS${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout "$t" "$@"
}
export RECUR_TEST_DATA_DIR=$PWD/tests/data
export RECUR_MODELS_DIR=$PWD/models

echo "LD_LIBRARY_PATH for recur: $LIBS" | tee "$OUT/env.txt"
# The binaries open the GPU providers from $B/lib/librecur_cuda.so (bin/../lib); the list says
# why where that fails (module missing, a CUDA library missing, no driver).
run "$B/bin/recur-run" --list-providers 2>&1 | tee "$OUT/providers.txt"

PART=${PART:-all}
if [[ $PART == tests || $PART == all ]]; then
  run "$B/bin/recur_unit_tests" \
    --gtest_filter='CublasApi*:Cudnn*:CudaGeneric*:GenericRnnCpu*:GlueOpsCpu*:StackedRnn*:ShapeSubgraph*' \
    --gtest_output="xml:$OUT/gtest.xml" > "$OUT/unit.txt" 2>&1 || status=1
  tail -n 40 "$OUT/unit.txt"

  # The models on the GPU providers, fusion on (auto) and off. The reference provider comes
  # last only for the nodes neither GPU provider runs (control flow, ConvTranspose; the unit
  # test CudaGenericPlan.EveryModelNodeOnAGpuProvider names the models that have them).
  run "$B/bin/recur-run" --suite models --providers cudnn,cuda-generic,reference \
    > "$OUT/models.txt" 2>&1 || status=1
  tail -n 3 "$OUT/models.txt"
  run "$B/bin/recur-run" --suite models --providers cudnn,cuda-generic,reference --fusion off \
    > "$OUT/models-nofusion.txt" 2>&1 || status=1
  tail -n 3 "$OUT/models-nofusion.txt"
  for m in char_lstm_lm packed_bilstm_tagger crnn; do
    run "$B/bin/recur-run" models/$m --explain --providers cudnn,cuda-generic \
      > "$OUT/explain-$m.txt" 2>&1 || status=1
  done
  # The model families (tests/data/families): the glue on cuda-generic, the RNNs on cudnn.
  run "$B/bin/recur-run" --suite tests/data/families --providers cudnn,cuda-generic,reference \
    > "$OUT/families.txt" 2>&1 || status=1
  tail -n 3 "$OUT/families.txt"
  run "$B/bin/recur-run" --suite tests/data/rnn --providers cuda-generic \
    > "$OUT/suite-generic.txt" 2>&1 || status=1
  tail -n 3 "$OUT/suite-generic.txt"

  # The oracle suite with cudnn first: claimed cases run on the GPU, the rest on the CPU. The
  # float16 cases are judged as CudnnGpu.FeatureSuite judges them (rtol and atol 1e-2): cuDNN
  # keeps the state in float16 from step to step, a few float16 roundings from the float64
  # oracle; the rest at recur-run's default tolerance.
  split=$(mktemp -d)
  mkdir -p "$split/fp16" "$split/other"
  for d in tests/data/rnn/*/; do
    n=$(basename "$d")
    case $n in *float16*) ln -s "$PWD/$d" "$split/fp16/$n" ;; *) ln -s "$PWD/$d" "$split/other/$n" ;; esac
  done
  run "$B/bin/recur-run" --suite "$split/other" --providers cudnn,reference \
    > "$OUT/suite.txt" 2>&1 || status=1
  tail -n 3 "$OUT/suite.txt"
  run "$B/bin/recur-run" --suite "$split/fp16" --providers cudnn,reference --rtol 1e-2 \
    --atol 1e-2 > "$OUT/suite-fp16.txt" 2>&1 || status=1
  tail -n 3 "$OUT/suite-fp16.txt"
fi

# The toolkit's sanitizer; the image has it on the PATH or under /usr/local/cuda. It refuses the
# device under gVisor ("Device not supported"): the H100 machines (Firecracker) run it.
# Every allocation recur makes outside a CUDA graph recording is its own stream-ordered
# allocation from the pool, which memcheck tracks one by one; the recording arena is one
# cudaMalloc, so an overrun inside it is not seen.
memcheck() {
  local cs c rc=0
  cs=$(command -v compute-sanitizer || true)
  for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [[ -n $cs || ! -x $c ]] || cs=$c
  done
  if [[ -z $cs ]]; then
    echo "compute-sanitizer not found" | tee "$OUT/memcheck.txt"
    return 1
  fi
  STEP_TIMEOUT=${MEMCHECK_TIMEOUT:-500} run "$cs" --tool memcheck --error-exitcode 86 \
    --print-limit 100 "$B/bin/recur_unit_tests" --gtest_filter="${MEMCHECK_FILTER:-*Gpu*}" \
    > "$OUT/memcheck.txt" 2>&1 || rc=1
  tail -n 30 "$OUT/memcheck.txt"
  STEP_TIMEOUT=${MEMCHECK_MODELS_TIMEOUT:-60} run "$cs" --tool memcheck --error-exitcode 86 \
    --print-limit 100 "$B/bin/recur-run" --suite models --providers cudnn,cuda-generic,reference \
    > "$OUT/memcheck-models.txt" 2>&1 || rc=1
  tail -n 10 "$OUT/memcheck-models.txt"
  return $rc
}
[[ $PART != memcheck ]] || memcheck || status=1

if [[ $PART == bench || $PART == all ]]; then
  # shellcheck disable=SC2086  # BENCH_ARGS is a list of arguments
  # Python runs on the machine's own library path (PyTorch's); recur-run gets $LIBS from it.
  # gpu_bench.py saves each row as it is measured, so a bench cut short still reports.
  t=$(STEP_TIMEOUT=${BENCH_TIMEOUT:-560} limit)
  ((t > 0)) || t=1 # timeout 0 would mean no limit at all
  RECUR_LD_LIBRARY_PATH="$LIBS" timeout "$t" python3 tools/gpu_bench.py --recur "$B/bin/recur-run" --out "$OUT" ${BENCH_ARGS:-} 2>&1 \
    | tee "$OUT/bench.log"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi
if [[ $PART == profile ]]; then
  t=$(STEP_TIMEOUT=${PROFILE_TIMEOUT:-300} limit)
  ((t > 0)) || t=1
  # shellcheck disable=SC2086  # PROFILE_ARGS is a list of arguments
  RECUR_LD_LIBRARY_PATH="$LIBS" PYTHONUNBUFFERED=1 timeout "$t" python3 tools/gpu_profile.py \
    --recur "$B/bin/recur-run" --out "$OUT" ${PROFILE_ARGS:-} 2>&1 | tee "$OUT/profile.log"
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi
pack_out "gpu-$PART"
exit $status
