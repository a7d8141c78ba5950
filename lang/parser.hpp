// The kernel source format: C++ statements (the body) with `#pragma kiln`
// lines that declare the kernel's name, its arguments and its specialisation
// parameters (lang/declarations.hpp). See docs/manual/kernel-language.md.
#pragma once

#include <string_view>

#include "lang/declarations.hpp"

namespace kiln::lang {

// Throws KernelSourceError "<file>:<line>: <what>" on a malformed declaration,
// a duplicate name, or a missing `#pragma kiln kernel`.
KernelInfo parse_kernel_source(std::string_view source, std::string_view file_name);

}  // namespace kiln::lang
