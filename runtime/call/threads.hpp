// Where a call's threads come from: the OpenMP runtime of the process (the
// one ICON's Fortran and the host program use, so no second pool competes
// with theirs). A call on n threads runs the kernel's entry on each thread of
// an OpenMP parallel region with its kiln_context; the barrier that ends each
// phase of the kernel is OpenMP's.
#pragma once

#include "kiln/arg.hpp"
#include "kiln/kernel.hpp"

namespace kiln::runtime {

using Entry = decltype(detail::CallBlock::entry);

// The thread count Config::threads 0 stands for: OpenMP's own
// (omp_get_max_threads(): OMP_NUM_THREADS, else the CPUs it may use) when
// OMP_NUM_THREADS is set, else 1.
int openmp_threads();

// Runs `entry` on `threads` threads; on the calling thread alone when
// threads <= 1 or the call is made inside a parallel region (no nested team:
// the caller's threads are the machine's already). Returns the entry's
// status: the same on every thread, for the checks it makes come before any phase.
int run_on_threads(Entry entry, const kiln_arg* const* args, const kiln_value* params, int threads);

// How many threads run_on_threads runs a call for `threads` on here: 1 inside a parallel region.
int threads_here(int threads);

}  // namespace kiln::runtime
