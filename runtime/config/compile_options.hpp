// How kernels are compiled for the CPU, from Config (opt_level, fp_contract):
// checked once, when a Runtime is made, and as the cache key takes them.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "kiln/runtime.hpp"

namespace kiln::runtime {

inline constexpr std::array<std::string_view, 6> kOptLevels = {"O0", "O1", "O2", "O3", "Os", "Oz"};
inline constexpr std::array<std::string_view, 3> kFpContracts = {"on", "off", "fast"};

struct CompileOptions {
  std::string opt_level = "-O3";  // as clang takes it
  std::string fp_contract = "on";
  std::string key;                // what the cache key holds of them
};

// Throws Error naming the Config field, the value and what it may be.
CompileOptions compile_options(const Config& config);

}  // namespace kiln::runtime
