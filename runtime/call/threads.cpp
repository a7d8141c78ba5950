#include "runtime/call/threads.hpp"

#include <linux/futex.h>
#include <omp.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <climits>
#include <cstdlib>

namespace kiln::runtime {
namespace {

// The end of a phase for the n threads of one call. A thread that arrives
// spins for at most kSpin (the partners of a balanced phase arrive within
// microseconds), then sleeps on a futex until the last one opens the next
// generation. OpenMP's barrier spins for as long as OMP_WAIT_POLICY and
// GOMP_SPINCOUNT say (libgomp: 300,000 iterations by default, for ever with
// `active`): on a node where another process is busy on a core, the spinning
// thread held its core while the partner it waited for queued behind that
// process for a scheduler time slice (issue 33: 11-33 ms for a one-point call
// on 2 threads). Sleeping gives the core to the partner.
class PhaseBarrier {
 public:
  // Every thread of the team calls it with the team's size before its first
  // wait (OpenMP may give fewer threads than asked: OMP_THREAD_LIMIT,
  // OMP_DYNAMIC); all store the same value.
  void join(int threads) { threads_.store(threads, std::memory_order_relaxed); }

  void wait() {
    const std::uint32_t generation = generation_.load(std::memory_order_acquire);
    if (arrived_.fetch_add(1, std::memory_order_acq_rel) == threads_.load(std::memory_order_relaxed) - 1) {
      arrived_.store(0, std::memory_order_relaxed);
      // seq_cst with the sleepers' count: a thread going to sleep either
      // sees the new generation or is counted here (and its futex wait
      // returns at once when the generation moved on before it).
      generation_.store(generation + 1, std::memory_order_seq_cst);
      if (sleepers_.load(std::memory_order_seq_cst) > 0) wake_all();
      return;
    }
    if (spin_while(generation)) return;
    sleepers_.fetch_add(1, std::memory_order_seq_cst);
    while (generation_.load(std::memory_order_seq_cst) == generation) sleep_while(generation);
    sleepers_.fetch_sub(1, std::memory_order_relaxed);
  }

  static void wait(void* barrier) { static_cast<PhaseBarrier*>(barrier)->wait(); }

 private:
  static constexpr auto kSpin = std::chrono::microseconds(20);

  // True when the generation moved on within kSpin.
  bool spin_while(std::uint32_t generation) const {
    const auto until = std::chrono::steady_clock::now() + kSpin;
    for (int i = 0;; ++i) {
      if (generation_.load(std::memory_order_acquire) != generation) return true;
      __builtin_ia32_pause();
      if (i % 64 == 63 && std::chrono::steady_clock::now() > until) return false;
    }
  }
  // Returns when woken, on a spurious wake-up, or at once when the
  // generation is no longer `generation` (the kernel compares atomically).
  void sleep_while(std::uint32_t generation) {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&generation_), FUTEX_WAIT_PRIVATE, generation, nullptr,
            nullptr, 0);
  }
  void wake_all() {
    syscall(SYS_futex, reinterpret_cast<std::uint32_t*>(&generation_), FUTEX_WAKE_PRIVATE, INT_MAX, nullptr, nullptr,
            0);
  }

  std::atomic<int> threads_{0};
  std::atomic<int> arrived_{0};
  std::atomic<std::uint32_t> generation_{0};
  std::atomic<int> sleepers_{0};
  static_assert(sizeof(std::atomic<std::uint32_t>) == 4 && std::atomic<std::uint32_t>::is_always_lock_free);
};

}  // namespace

int openmp_threads() {
  const char* set = std::getenv("OMP_NUM_THREADS");
  if (!set || !*set) return 1;
  const int threads = omp_get_max_threads();
  return threads < kMaxThreads ? threads : kMaxThreads;
}

int threads_for_work(int threads, std::int64_t points) {
  const std::int64_t most = points / kPointsPerThread;
  return most < 1 ? 1 : most < threads ? static_cast<int>(most) : threads;
}

int threads_here(int threads) { return threads <= 1 || omp_in_parallel() ? 1 : threads; }

int run_on_threads(Entry entry, const kiln_arg* const* args, const kiln_value* params, int threads) {
  if (threads_here(threads) == 1) return entry(args, params, nullptr);
  std::atomic<int> status{0};
  PhaseBarrier barrier;
#pragma omp parallel num_threads(threads)
  {
    barrier.join(omp_get_num_threads());
    const kiln_context context{omp_get_thread_num(), omp_get_num_threads(), &PhaseBarrier::wait, &barrier};
    const int mine = entry(args, params, &context);
    int none = 0;
    if (mine != 0) status.compare_exchange_strong(none, mine);
  }
  return status.load();
}

}  // namespace kiln::runtime
