// Devices, streams, library handles, device memory, host<->device copies and CUDA-graph
// recording for the CUDA providers: one include for kernels that use all of them.
#pragma once

#include "providers/cuda/cuda_memory_pool.h"
#include "providers/cuda/cuda_recorder.h"
#include "providers/cuda/cuda_stream.h"
