// Turns a kernel and a bound specialisation into one C++ translation unit:
// the prelude, then an `extern "C"` entry that declares every parameter
// (constexpr when specialised, read from the parameter block when generic) and
// every argument view, then the kernel's body under a #line directive so that
// diagnostics name the kernel's own file and lines.
//
// Both modes produce the same entry signature:
//   int entry(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context)
// (context: this thread's part of a call on several, or nullptr)
// returning 0, or 1 + the index of an array whose strides differ from the
// specialised ones, or -1 for arrays and a domain the declared extents refuse
// (the call is then refused before any work is done).
#pragma once

#include <string>
#include <string_view>

#include "lang/binder.hpp"
#include "lang/declarations.hpp"

namespace kiln::lang {

// check: check mode (Config::check): bounds-checked views and range-checked
// table reads; the entry then takes a kiln::CheckReport after the temporaries
// (runtime/call/check_report.hpp) and returns -2 at the first violation.
std::string generate_source(const KernelInfo& kernel, const BoundSpec& bound, bool specialised,
                            std::string_view prelude, std::string_view entry_symbol, bool check = false);

// The same kernel as a CUDA/HIP `__global__` entry. A launch cannot pass
// host pointers to the caller's kiln_args, so the arguments travel by value,
// in two structs (the driver copies kernel parameters):
//   __global__ void entry(kiln_gpu_args args, kiln_gpu_params params)
// with kiln_gpu_args { kiln_arg a[n_args]; } and kiln_gpu_params
// { kiln_value v[n_params]; } (at least one element each). A kernel cannot
// refuse a call, so the launcher checks the specialised strides before it
// launches.
std::string generate_gpu_source(const KernelInfo& kernel, const BoundSpec& bound, bool specialised,
                                std::string_view prelude, std::string_view entry_symbol);

}  // namespace kiln::lang
