// Running a primitive in the layouts oneDNN prefers over tensors in the plain (row-major)
// layouts recur holds: reorders between the two, made once per shape. For the small tensors of
// streaming models, oneDNN's plain-layout implementations (im2col + GEMM convolution, the
// generic nchw pooling) cost several times the jit ones on channels-last or blocked data plus
// the reorders.
#pragma once

#include <memory>
#include <string>

#include <dnnl.hpp>

#include "providers/onednn/common/prim_cache.h"
#include "runtime/core/status.h"

namespace recur::onednn {

// A reorder from one layout of a tensor to another, as a CachedPrimitive (user scratchpad, one
// thread); null where the two are the same.
Result<std::shared_ptr<CachedPrimitive>> make_reorder(const dnnl::memory::desc& from,
                                                      const dnnl::memory::desc& to,
                                                      const std::string& what);

// The channels-last layout of a plain descriptor of rank 3 to 5 (nwc, nhwc, ndhwc).
dnnl::memory::desc channels_last(const dnnl::memory::desc& plain);

}  // namespace recur::onednn
