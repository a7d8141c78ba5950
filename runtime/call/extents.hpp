// What a kernel's extent declarations (`#pragma kiln size`, `w[cells][levels]`)
// demand of a call, checked in C++: the generated entry checks the same rules
// inline (runtime/kernels/codegen.cpp) and, when they fail, the call comes here
// for the error that names what is wrong. A GPU launch, whose kernel cannot
// refuse a call, checks here before it launches.
//
// The rules (docs/manual/kernel-language.md, "Extents"):
// - A flat dimension's extent is its shape. A blocked array's horizontal
//   dimension (nproma, ..., nblks) holds any extent n that fills its last block
//   partly or wholly: nproma * (nblks - 1) < n <= nproma * nblks (ICON's nblks
//   is n rounded up to blocks); its other dimensions are their shapes.
// - A constant or parameter extent (`[3]`, `[nz]`, `[levels + 1]`) must be held.
// - The arrays sharing a named size agree on it.
// - A size's domain range [start, end), when not empty, lies within it.
// - A table with entries (`indexes cells`) indexes a size that is not empty.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "kiln/arg.hpp"
#include "lang/parser.hpp"

namespace kiln::runtime {

// What the entry returns for a call its extent checks refuse (the prelude's kiln::extent_status).
inline constexpr int kExtentStatus = -1;

// The values a named size may take in a call, and the argument dimension that
// bounds it from above (what a domain range is measured against).
struct SizeBounds {
  std::int64_t lo = 0;
  std::int64_t hi = INT64_MAX;
  std::size_t arg = 0;
  int dim = 0;
};

// `args`: the call's arguments (already checked for type and rank); `nproma`:
// per argument, its blocking (kFlat or not); `params`: per KernelInfo::params.
// Throws ArgumentError naming the kernel, argument, dimension, range and extent.
// Returns every size's bounds when the call agrees with the declarations.
std::vector<SizeBounds> check_extents(const lang::KernelInfo& kernel, const kiln_arg* const* args,
                                      std::span<const std::int64_t> nproma, const kiln_value* params);

}  // namespace kiln::runtime
