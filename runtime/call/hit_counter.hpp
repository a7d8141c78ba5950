// A count that several threads add to at once without sharing a cache line:
// each thread adds to a stripe of its own (the first kStripes threads get one
// each), and a reader sums the stripes. One atomic counter that two threads
// increment moves its cache line between their cores on every increment,
// which made two threads' memory hits of one kernel slower than one thread's.
#pragma once

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>

namespace kiln::runtime {

// The stripe this thread adds to: handed out in turn on a thread's first use.
std::size_t this_threads_stripe() noexcept;

class HitCounter {
 public:
  static constexpr std::size_t kStripes = 8;

  void add() noexcept { stripes_[this_threads_stripe()].count.fetch_add(1, std::memory_order_relaxed); }
  // Exact once the adding threads are done; while they add, some of their
  // latest additions may be missing.
  std::uint64_t total() const noexcept {
    std::uint64_t sum = 0;
    for (const Stripe& s : stripes_) sum += s.count.load(std::memory_order_relaxed);
    return sum;
  }

 private:
  struct alignas(64) Stripe {
    std::atomic<std::uint64_t> count{0};
  };
  std::array<Stripe, kStripes> stripes_{};
};

}  // namespace kiln::runtime
