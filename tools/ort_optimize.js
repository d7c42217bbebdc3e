// Saves the model ONNX Runtime (CPU) makes of MODEL at a graph optimization level, as a user
// does with SessionOptions.optimized_model_filepath:
//   node ort_optimize.js MODEL OUT [basic|extended|all]
// onnxruntime-node is resolved through NODE_PATH (tools/gen_contrib_tests.py sets it).
'use strict';
const ort = require('onnxruntime-node');

(async () => {
  const [model, out, level] = process.argv.slice(2);
  await ort.InferenceSession.create(model, {
    graphOptimizationLevel: level || 'extended',
    optimizedModelFilePath: out,
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
  });
})().catch((e) => {
  console.error(String(e));
  process.exit(1);
});
