#include "runtime/provider/repack_count.h"

#include <atomic>

namespace recur {

namespace {
std::atomic<int64_t> g_repacks{0};
}  // namespace

void count_run_time_repack() { g_repacks.fetch_add(1, std::memory_order_relaxed); }
int64_t run_time_repacks() { return g_repacks.load(std::memory_order_relaxed); }

}  // namespace recur
