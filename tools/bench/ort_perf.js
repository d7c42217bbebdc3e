// Times one model with ONNX Runtime (CPU) through onnxruntime-node, like `recur-run --perf
// --json`: node ort_perf.js MODEL.onnx FEEDS_DIR THREADS WARMUP REPEAT
// FEEDS_DIR/feeds.json lists the inputs ({name, type, shape, file}), each a raw little-endian
// file beside it, as tools/bench/gen_suite.py and run_bench.py write them. onnxruntime-node is
// resolved through NODE_PATH (run_bench.py sets it).
'use strict';
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');

const kArrays = {
  float32: Float32Array,
  float64: Float64Array,
  int32: Int32Array,
  int64: BigInt64Array,
};

function percentile(sorted, p) {
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.min(lo + 1, sorted.length - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo);
}

function readFeeds(dir) {
  const list = JSON.parse(fs.readFileSync(path.join(dir, 'feeds.json'), 'utf8'));
  const feeds = {};
  for (const f of list) {
    const raw = fs.readFileSync(path.join(dir, f.file));
    const Arr = kArrays[f.type];
    if (!Arr) throw new Error('unsupported input type ' + f.type);
    // Copy into an aligned buffer: a Buffer's offset need not suit the element size.
    const bytes = new Uint8Array(raw.byteLength);
    bytes.set(raw);
    feeds[f.name] = new ort.Tensor(f.type, new Arr(bytes.buffer), f.shape);
  }
  return feeds;
}

// VmHWM and VmRSS in KiB, as recur-run --perf --json reports them after load; -1 if absent.
function loadMemory() {
  const out = {hwm: -1, rss: -1};
  try {
    for (const line of fs.readFileSync('/proc/self/status', 'utf8').split('\n')) {
      if (line.startsWith('VmHWM:')) out.hwm = parseInt(line.slice(6), 10);
      if (line.startsWith('VmRSS:')) out.rss = parseInt(line.slice(6), 10);
    }
  } catch (e) {
    // Not Linux: the columns stay empty.
  }
  return out;
}

async function main() {
  const [model, dir, threadsArg, warmupArg, repeatArg] = process.argv.slice(2);
  if (!model || !dir) {
    console.error('usage: node ort_perf.js MODEL.onnx FEEDS_DIR THREADS WARMUP REPEAT');
    process.exit(2);
  }
  const threads = parseInt(threadsArg || '1', 10);
  const warmup = parseInt(warmupArg || '3', 10);
  const repeat = parseInt(repeatArg || '20', 10);
  const feeds = readFeeds(dir);

  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(model, {
    intraOpNumThreads: threads,
    interOpNumThreads: 1,
    executionProviders: ['cpu'],
    graphOptimizationLevel: 'all',
  });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const mem = loadMemory();
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
    model,
    engine: 'onnxruntime-node ' + (ort.env.versions ? ort.env.versions.common : ''),
    threads,
    load_ms: loadMs,
    warmup,
    runs: repeat,
    samples_ms: ms,
    latency_ms: {min: sorted[0], p50: percentile(sorted, 0.5), p90: percentile(sorted, 0.9),
                 mean},
    load_peak_rss_kib: mem.hwm,
    load_rss_kib: mem.rss,
  }));
}

main().catch((e) => {
  console.error(String(e && e.stack || e));
  process.exit(1);
});
