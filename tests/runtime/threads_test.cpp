// run_on_threads (runtime/call/threads.hpp): a call on n threads runs the
// entry once per thread of an OpenMP team, each with its own context (thread
// t of n) and a barrier that holds every thread until all have reached it;
// inside a parallel region, or for one thread, the caller's thread alone.
#include "runtime/call/threads.hpp"

#include <gtest/gtest.h>
#include <omp.h>

#include <atomic>
#include <mutex>
#include <set>
#include <vector>

namespace kiln::runtime {
namespace {

std::mutex g_mutex;
std::set<int> g_threads_seen;
std::vector<int> g_counts;
std::atomic<int> g_arrived{0};
std::atomic<bool> g_barrier_held{true};
int g_status = 0;

// Before the barrier every thread checks in; after it, each must see all n.
int recording_entry(const kiln_arg* const*, const kiln_value*, const kiln_context* context) {
  if (!context) {
    std::lock_guard lock(g_mutex);
    g_threads_seen.insert(-1);
    return g_status;
  }
  {
    std::lock_guard lock(g_mutex);
    g_threads_seen.insert(context->thread);
    g_counts.push_back(context->threads);
  }
  g_arrived.fetch_add(1);
  context->barrier(context->state);
  if (g_arrived.load() != context->threads) g_barrier_held = false;
  return g_status;
}

void reset() {
  g_threads_seen.clear();
  g_counts.clear();
  g_arrived = 0;
  g_barrier_held = true;
  g_status = 0;
}

TEST(Threads, EachThreadRunsTheEntryOnceWithItsContextAndTheBarrierHoldsThemAll) {
  for (int n : {2, 3, 7}) {
    reset();
    EXPECT_EQ(run_on_threads(&recording_entry, nullptr, nullptr, n), 0);
    std::set<int> expected;
    for (int t = 0; t < n; ++t) expected.insert(t);
    EXPECT_EQ(g_threads_seen, expected) << n;
    EXPECT_EQ(g_counts, std::vector<int>(static_cast<std::size_t>(n), n));
    EXPECT_TRUE(g_barrier_held) << n;
  }
}

TEST(Threads, OneThreadAndCallsInsideAParallelRegionRunAloneWithoutAContext) {
  reset();
  EXPECT_EQ(run_on_threads(&recording_entry, nullptr, nullptr, 1), 0);
  EXPECT_EQ(g_threads_seen, std::set<int>{-1});
  reset();
  int statuses[2] = {-9, -9};
#pragma omp parallel num_threads(2)
  statuses[omp_get_thread_num()] = run_on_threads(&recording_entry, nullptr, nullptr, 4);
  EXPECT_EQ(g_threads_seen, std::set<int>{-1});  // no nested team: every call on its caller's thread
  EXPECT_EQ(statuses[0], 0);
  EXPECT_EQ(statuses[1], 0);
}

TEST(Threads, AStatusTheEntryReturnsComesBack) {
  reset();
  g_status = -1;  // as the extent checks return, on every thread alike
  EXPECT_EQ(run_on_threads(&recording_entry, nullptr, nullptr, 3), -1);
}

}  // namespace
}  // namespace kiln::runtime
