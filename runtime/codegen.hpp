// Turns a kernel and a bound specialisation into one C++ translation unit:
// the prelude, then an `extern "C"` entry that declares every parameter
// (constexpr when specialised, read from the parameter block when generic) and
// every argument view, then the kernel's body under a #line directive so that
// diagnostics name the kernel's own file and lines.
//
// Both modes produce the same entry signature:
//   int entry(const kiln_arg* args, const kiln_value* params)
// returning 0, or 1 + the index of an array whose strides differ from the
// specialised ones (the call is then refused before any work is done).
#pragma once

#include <string>
#include <string_view>

#include "runtime/bound_spec.hpp"
#include "runtime/kernel_source.hpp"

namespace kiln::runtime {

std::string generate_source(const KernelInfo& kernel, const BoundSpec& bound, bool specialised,
                            std::string_view prelude, std::string_view entry_symbol);

}  // namespace kiln::runtime
