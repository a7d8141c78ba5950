// What a call checks its arguments against on the Python side: a kernel's
// arguments in order, as Runtime::declaration gives them.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "kiln/arg.hpp"

namespace kiln::python {

struct ArgumentInfo {
  std::string name;
  ElementType type;
  int rank;  // 0: a scalar
};

struct Signature {
  std::string kernel;
  std::vector<ArgumentInfo> arguments;
  std::size_t scalars = 0;  // how many of them are scalars
  // An example array given for its strides (Runtime.kernel's strides_of), not
  // a call's argument: a refusal is then a SpecError naming it.
  bool example = false;
};

// "a double array of rank 2", "an int32 scalar": what argument `info` takes.
std::string expected(const ArgumentInfo& info);

// Throws ArgumentError "kiln: kernel 'k', argument i 'name': <what>" (for an
// example, SpecError "kiln: kernel 'k', strides_of 'name': <what>").
[[noreturn]] void refuse(const Signature& signature, std::size_t index, const std::string& what);

}  // namespace kiln::python
