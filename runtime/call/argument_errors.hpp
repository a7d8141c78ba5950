// The errors a call with wrong arguments gets, naming the kernel, the
// argument and what was expected; shared by CPU calls and GPU launches.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "kiln/arg.hpp"
#include "kiln/spec.hpp"
#include "lang/parser.hpp"

namespace kiln::runtime {

[[noreturn]] void bad_count(const lang::KernelInfo& kernel, std::size_t count);
// nproma: the argument's blocking as bound (kFlat, kRunTimeNproma or nproma).
[[noreturn]] void bad_arg(const lang::KernelInfo& kernel, std::size_t index, const kiln_arg& got, std::int64_t nproma);
// The strides (nproma, block count) the call was specialised for differ from `got`'s.
[[noreturn]] void bad_strides(const lang::KernelInfo& kernel, std::size_t index, const kiln_arg& got,
                              const std::optional<Spec::Strides>& fixed, std::int64_t nproma, std::int64_t nblks);

}  // namespace kiln::runtime
