// ONNX Runtime's side of tools/bench/varying_shapes.py: node ort_varying.js MODEL INPUT
// SHAPES_JSON THREADS. Runs the shapes in order, and prints each run's time and the resident
// memory as JSON.
'use strict';
const ort = require('onnxruntime-node');

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
  const times = [];
  for (const x of feeds) {
    const t0 = process.hrtime.bigint();
    await session.run({[input]: x});
    times.push(Number(process.hrtime.bigint() - t0) / 1e6);
  }
  console.log(JSON.stringify({times_ms: times, rss_loaded_mib: loaded, rss_after_mib: mib()}));
})();
