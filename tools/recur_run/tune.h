// recur-run --tune MODEL.onnx: fills the tuning cache ahead of deployment (docs/tuning-cache.md).
#pragma once

#include "tools/recur_run/options.h"

namespace recur::tools {

// Loads the model with tuning on, runs it once on random inputs in the shapes --shape and
// --dim give (so every RNN bucket is timed and recorded), and prints what the cache gained.
int run_tune(const Args& a);

}  // namespace recur::tools
