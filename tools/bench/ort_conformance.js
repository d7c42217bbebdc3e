// Runs a suite of ONNX backend tests with ONNX Runtime (CPU) through onnxruntime-node, for
// tools/ort_conformance.py, which reads the test data, writes this manifest, and compares:
//   node ort_conformance.js MANIFEST.json [FIRST_TEST]
// MANIFEST: {tests: [{model, result, sets: [{inputs: [{name, type, shape, file | strings}],
// out_prefix}]}]}. Each input is a raw little-endian file (float16 as its bits), or a list of
// strings. For each test this writes its `result` JSON: {load_error} or {sets: [{error} |
// {outputs: [{name, type, shape, file | strings}]}]}, each output a raw file named from the
// set's out_prefix. A result is written as soon as its test is done, so that if ONNX Runtime
// takes the process down the caller can start again after the test that did it.
// onnxruntime-node is resolved through NODE_PATH (the caller sets it).
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

// Node 20 has no Float16Array: onnxruntime-node takes and gives float16 as its bits.
const kArrays = {
  float32: Float32Array,
  float64: Float64Array,
  float16: Uint16Array,
  int8: Int8Array,
  int16: Int16Array,
  int32: Int32Array,
  int64: BigInt64Array,
  uint8: Uint8Array,
  uint16: Uint16Array,
  uint32: Uint32Array,
  uint64: BigUint64Array,
  bool: Uint8Array,
};

function readInput(f) {
  if (f.type === 'string') return new ort.Tensor('string', f.strings, f.shape);
  const Arr = kArrays[f.type];
  if (!Arr) throw new Error('unsupported input type ' + f.type);
  const raw = fs.readFileSync(f.file);
  // Copy into a fresh buffer: a Buffer's offset need not suit the element size.
  const bytes = new Uint8Array(raw.byteLength);
  bytes.set(raw);
  return new ort.Tensor(f.type, new Arr(bytes.buffer), f.shape);
}

function writeOutput(name, t, prefix, k) {
  const out = {name, type: t.type, shape: Array.from(t.dims)};
  if (t.type === 'string') {
    out.strings = Array.from(t.data);
  } else {
    const d = t.data;
    out.file = prefix + '_' + k + '.bin';
    fs.writeFileSync(out.file, Buffer.from(d.buffer, d.byteOffset, d.byteLength));
  }
  return out;
}

function message(e) {
  return String((e && e.message) || e).split('\n')[0];
}

async function runTest(test) {
  let session;
  try {
    session = await ort.InferenceSession.create(test.model, {
      executionProviders: ['cpu'],
      intraOpNumThreads: 1,
      interOpNumThreads: 1,
      executionMode: 'sequential',
      logSeverityLevel: 3,
    });
  } catch (e) {
    return {load_error: message(e)};
  }
  const sets = [];
  for (const s of test.sets) {
    try {
      const feeds = {};
      for (const f of s.inputs) feeds[f.name] = readInput(f);
      const results = await session.run(feeds);
      const outputs = [];
      session.outputNames.forEach((name, k) => {
        if (name in results) outputs.push(writeOutput(name, results[name], s.out_prefix, k));
      });
      sets.push({outputs});
    } catch (e) {
      sets.push({error: message(e)});
    }
  }
  try {
    await session.release();
  } catch (e) {
    // Nothing to do: the process ends soon anyway.
  }
  return {sets};
}

async function main() {
  const [manifestPath, firstArg] = process.argv.slice(2);
  if (!manifestPath) {
    console.error('usage: node ort_conformance.js MANIFEST.json [FIRST_TEST]');
    process.exit(2);
  }
  const manifest = JSON.parse(fs.readFileSync(manifestPath, 'utf8'));
  const first = parseInt(firstArg || '0', 10);
  for (let i = first; i < manifest.tests.length; ++i) {
    const test = manifest.tests[i];
    const r = await runTest(test);
    fs.writeFileSync(test.result, JSON.stringify(r));
  }
}

main().catch((e) => {
  console.error(message(e));
  process.exit(1);
});
