// A Spec checked against a kernel's declarations: one value per parameter in
// declaration order, and the fixed strides (if any) of each array argument.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/spec.hpp"
#include "runtime/kernels/kernel_source.hpp"

namespace kiln::runtime {

struct BoundSpec {
  std::vector<kiln_value> values;                         // per KernelInfo::params
  std::vector<std::optional<Spec::Strides>> strides;      // per KernelInfo::args
};

// Throws SpecError naming the kernel, the parameter and what was expected when
// a value is missing, unknown, of the wrong type, or strides have the wrong rank.
BoundSpec bind_spec(const KernelInfo& kernel, const Spec& spec);

}  // namespace kiln::runtime
