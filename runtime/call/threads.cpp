#include "runtime/call/threads.hpp"

#include <omp.h>

#include <atomic>
#include <cstdlib>

namespace kiln::runtime {
namespace {

// An orphaned barrier: it binds to the parallel region of run_on_threads.
void openmp_barrier(void*) {
#pragma omp barrier
}

}  // namespace

int openmp_threads() {
  const char* set = std::getenv("OMP_NUM_THREADS");
  return set && *set ? omp_get_max_threads() : 1;
}

int threads_here(int threads) { return threads <= 1 || omp_in_parallel() ? 1 : threads; }

int run_on_threads(Entry entry, const kiln_arg* const* args, const kiln_value* params, int threads) {
  if (threads_here(threads) == 1) return entry(args, params, nullptr);
  std::atomic<int> status{0};
#pragma omp parallel num_threads(threads)
  {
    const kiln_context context{omp_get_thread_num(), omp_get_num_threads(), &openmp_barrier, nullptr};
    const int mine = entry(args, params, &context);
    int none = 0;
    if (mine != 0) status.compare_exchange_strong(none, mine);
  }
  return status.load();
}

}  // namespace kiln::runtime
