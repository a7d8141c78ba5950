// Where a call's threads come from: the OpenMP runtime of the process (the
// one ICON's Fortran and the host program use, so no second pool competes
// with theirs). A call on n threads runs the kernel's entry on each thread of
// an OpenMP parallel region with its kiln_context; the barrier that ends each
// phase of the kernel is kiln's own (PhaseBarrier, threads.cpp): a short spin,
// then a futex wait, whatever OMP_WAIT_POLICY or GOMP_SPINCOUNT say.
// docs/manual/threads.md says when a call splits and what it costs.
#pragma once

#include <cstddef>
#include <cstdint>

#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"
#include "kiln/runtime.hpp"

namespace kiln::runtime {

using Entry = decltype(detail::CallBlock::entry);

// The most threads one call may ask for: KILN_THREADS', Runtime(threads=)'s
// and run_on()'s bound alike (the one bound, Config's).
inline constexpr int kMaxThreads = Config::kMaxThreads;

// The fewest points of work a thread of a call is given: a call of fewer
// than 2 * kPointsPerThread points runs on one thread, whatever the thread
// count (docs/manual/threads.md, "How many threads a call runs on").
// Measured on this project's 2-core VM (Intel Xeon, AVX-512; /tmp harness,
// update_theta_and_exner in Fortran order, 65 levels): one thread takes
// 0.70-0.93 ns a point (1,040 points: 0.73 us; 133,120: 124 us); a second
// thread costs at least its fork, a barrier and the join: 1.09 us on a quiet
// node (kiln_bench call_1point, the AVX2 VM: docs/manual/using.md), here with
// both cores busy (load 9) 6.8 us in the median and 11.5 ms in the mean. Two threads break even near 3,000 points on a quiet
// node; 16,384 a thread keeps every call that a busy node can slow by more
// than it gains (under ~11 us of one-thread work) on one thread.
inline constexpr std::int64_t kPointsPerThread = 16384;

// The thread count Config::threads 0 stands for: OpenMP's own
// (omp_get_max_threads(): OMP_NUM_THREADS, else the CPUs it may use) when
// OMP_NUM_THREADS is set, else 1; at most kMaxThreads.
int openmp_threads();

// The threads a call of `points` points of work runs on when `threads` are
// allowed: at most one per kPointsPerThread points, at least one.
int threads_for_work(int threads, std::int64_t points);

// Runs `entry` on `threads` threads; on the calling thread alone when
// threads <= 1 or the call is made inside a parallel region (no nested team:
// the caller's threads are the machine's already). Returns the entry's
// status: the same on every thread, for the checks it makes come before any phase.
int run_on_threads(Entry entry, const kiln_arg* const* args, const kiln_value* params, int threads);

// How many threads run_on_threads runs a call for `threads` on here: 1 inside a parallel region.
int threads_here(int threads);

}  // namespace kiln::runtime
