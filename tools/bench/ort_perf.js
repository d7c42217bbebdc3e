// Times one model with ONNX Runtime (CPU) through onnxruntime-node, like `recur-run --perf
// --json`: node ort_perf.js CASE_DIR THREADS WARMUP REPEAT
// CASE_DIR holds model.onnx, X.bin (raw float32) and X.shape, as tools/bench/gen_suite.py
// writes them. onnxruntime-node is resolved through NODE_PATH (run_bench.py sets it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

function percentile(sorted, p) {
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

async function main() {
  const [dir, threadsArg, warmupArg, repeatArg] = process.argv.slice(2);
  if (!dir) {
    console.error('usage: node ort_perf.js CASE_DIR THREADS WARMUP REPEAT');
    process.exit(2);
  }
  const threads = parseInt(threadsArg || '1', 10);
  const warmup = parseInt(warmupArg || '3', 10);
  const repeat = parseInt(repeatArg || '20', 10);
  const shape = fs.readFileSync(path.join(dir, 'X.shape'), 'utf8').trim().split(/\s+/).map(Number);
  const raw = fs.readFileSync(path.join(dir, 'X.bin'));
  const x = new Float32Array(raw.buffer, raw.byteOffset, raw.byteLength / 4);

  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(path.join(dir, 'model.onnx'), {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
  });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {X: new ort.Tensor('float32', x, shape)};
  for (let i = 0; i < warmup; ++i) await session.run(feeds);
  const ms = [];
  for (let i = 0; i < repeat; ++i) {
    const s = process.hrtime.bigint();
    await session.run(feeds);
    ms.push(Number(process.hrtime.bigint() - s) / 1e6);
  }
  const sorted = ms.slice().sort((a, b) => a - b);
  const mean = ms.reduce((a, b) => a + b, 0) / ms.length;
  console.log(JSON.stringify({
    model: path.join(dir, 'model.onnx'),
    engine: 'onnxruntime-node ' + (ort.env.versions ? ort.env.versions.common : ''),
    threads,
    load_ms: loadMs,
    warmup,
    runs: repeat,
    samples_ms: ms,
    latency_ms: {min: sorted[0], p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9),
                 mean},
  }));
}

main().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
