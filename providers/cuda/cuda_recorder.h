// CUDA-graph recording of runs for SessionOptions::cuda_graphs.
#pragma once

#include <memory>

#include "runtime/provider/kernel.h"

namespace recur::cuda {

// CUDA graphs for SessionOptions::cuda_graphs: measuring counts the calling thread's device
// allocations; recording captures the run's stream, a stream the recorder keeps for its
// replays (thread-local capture mode, so other threads' runs are unaffected), with the
// thread's allocations served from an arena that the recorder owns, so every address stays
// valid for the replays.
std::unique_ptr<RunRecorder> make_cuda_recorder(int device);

}  // namespace recur::cuda
