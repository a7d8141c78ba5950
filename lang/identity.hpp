// What stands for the code generator in a cache key: a digest of the sources
// that turn a kernel and a binding into a translation unit, so that a warm
// start never generates source to find its key, and any change to them makes
// new keys. (The prelude's own text is digested where keys are made:
// runtime/kernels/cache_key.hpp.)
#pragma once

#include <string_view>

namespace kiln::lang {

// Taken by CMake at configure time over declarations, parser, binder and code
// generator (lang/CMakeLists.txt).
std::string_view codegen_digest();

}  // namespace kiln::lang
