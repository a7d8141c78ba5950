// The errors a call with wrong arguments gets, naming the kernel, the
// argument and what was expected; shared by CPU calls and GPU launches.
#pragma once

#include <cstddef>

#include "kiln/arg.hpp"
#include "runtime/kernels/kernel_source.hpp"

namespace kiln::runtime {

[[noreturn]] void bad_count(const KernelInfo& kernel, std::size_t count);
[[noreturn]] void bad_arg(const KernelInfo& kernel, std::size_t index, const kiln_arg& got);
[[noreturn]] void bad_strides(const KernelInfo& kernel, std::size_t index, const kiln_arg& got);

}  // namespace kiln::runtime
