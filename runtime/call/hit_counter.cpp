#include "runtime/call/hit_counter.hpp"

namespace kiln::runtime {

std::size_t this_threads_stripe() noexcept {
  static std::atomic<std::size_t> next{0};
  thread_local const std::size_t mine = next.fetch_add(1, std::memory_order_relaxed) % HitCounter::kStripes;
  return mine;
}

}  // namespace kiln::runtime
