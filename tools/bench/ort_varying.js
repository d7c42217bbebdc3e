// ONNX Runtime's side of tools/bench/varying_shapes.py: node ort_varying.js MODEL INPUT
// SHAPES_JSON THREADS. Runs each shape once (after the first), then all again, and prints
// the medians and the resident memory as JSON.
'use strict';
const ort = require('onnxruntime-node');

function median(a) {
  const s = [...a].sort((x, y) => x - y);
  return s[s.length >> 1];
}

(async () => {
  const [model, input, shapesJson, threads] = process.argv.slice(2);
  const shapes = JSON.parse(shapesJson);
  const session = await ort.InferenceSession.create(
      model, {intraOpNumThreads: Number(threads), interOpNumThreads: 1});
  const feeds = shapes.map((s) => {
    const n = s.reduce((a, b) => a * b, 1);
    return new ort.Tensor('float32', Float32Array.from({length: n}, () => Math.random()), s);
  });
  const mib = () => process.memoryUsage().rss / 1048576;
  const loaded = mib();
  await session.run({[input]: feeds[0]});
  const times = {new: [], seen: []};
  let after = 0;
  for (const kind of ['new', 'seen']) {
    for (const x of feeds.slice(1)) {
      const t0 = process.hrtime.bigint();
      await session.run({[input]: x});
      times[kind].push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    if (kind === 'new') after = mib();
  }
  console.log(JSON.stringify({new_ms: median(times.new), seen_ms: median(times.seen),
                              rss_loaded_mib: loaded, rss_after_mib: after}));
})();
