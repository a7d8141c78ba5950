// A Spec checked against a kernel's declarations: one value per parameter in
// declaration order, and the fixed strides (if any) of each array argument.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/arg.hpp"
#include "kiln/spec.hpp"
#include "lang/declarations.hpp"

namespace kiln::lang {

// nproma of an argument that is not blocked (see Spec::blocked).
inline constexpr std::int64_t kFlat = 0;
// nproma of a blocked argument of a generic build: read from the array.
inline constexpr std::int64_t kRunTimeNproma = -1;

// The rank a call passes for an argument declared with `rank`: one more
// (the blocks) when it is blocked.
inline int passed_rank(int rank, std::int64_t nproma) { return rank + (nproma != kFlat ? 1 : 0); }

struct BoundSpec {
  std::vector<kiln_value> values;                         // per KernelInfo::params
  std::vector<bool> run_time;                             // per KernelInfo::params: read at run time (Spec::run_time)
  std::vector<std::optional<Spec::Strides>> strides;      // per KernelInfo::args (blocked: rank + 1)
  std::vector<std::int64_t> nproma;                       // per KernelInfo::args: kFlat, kRunTimeNproma or > 0
  std::vector<std::int64_t> nblks;                        // per KernelInfo::args: the block count, 0: run time

  bool blocked(std::size_t arg) const { return nproma[arg] != kFlat; }
};

// Throws SpecError naming the kernel, the parameter and what was expected when
// a value is missing, unknown, of the wrong type, or strides have the wrong
// rank, or a blocked array is a scalar or has nproma < 1.
BoundSpec bind_spec(const KernelInfo& kernel, const Spec& spec);

// What a generic build keeps of `bound`: strides, nproma and nblks are read at
// run time, but which arrays are blocked shapes its code, so that stays and
// is returned as a name for the binary (empty when none is, so flat generic
// builds share one key).
std::string forget_values(BoundSpec& bound);

}  // namespace kiln::lang
