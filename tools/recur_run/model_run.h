// recur-run MODEL.onnx and recur-run DIR: load one model, then plan, explain, compare with a
// test folder's expected outputs, time, or run once and summarise (and save) the outputs.
#pragma once

#include "tools/recur_run/options.h"

namespace recur::tools {

int run_model(const Args& a);

}  // namespace recur::tools
