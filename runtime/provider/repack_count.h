// A process-wide count of weight repacks done while a model runs rather than at load. Kernels
// whose weights are not constants (a graph input, a value computed each run) repack them on
// every run; tests read the count to check that weights, inside control flow too, were seen as
// constants and repacked once.
#pragma once

#include <cstdint>

namespace recur {

// Called by a kernel each time it repacks weights inside run().
void count_run_time_repack();
int64_t run_time_repacks();

}  // namespace recur
