// The declarations of the kernels embedded in libkiln (kernels_src/), parsed
// once, for the bench programs that generate or call a granule kernel's
// translation unit outside a Runtime (kiln_granule_sources,
// kiln_alternating_bench).
#pragma once

#include <string_view>
#include <vector>

#include "kernels_src/embedded_sources.hpp"
#include "lang/parser.hpp"

namespace kiln_bench {

// The embedded kernel `name`, or nullptr.
inline const kiln::lang::KernelInfo* find_embedded_kernel(std::string_view name) {
  static const std::vector<kiln::lang::KernelInfo> infos = [] {
    std::vector<kiln::lang::KernelInfo> parsed;
    for (const auto& file : kiln::kernels_src::kernels())
      parsed.push_back(kiln::lang::parse_kernel_source(file.text, file.name));
    return parsed;
  }();
  for (const auto& info : infos)
    if (info.name == name) return &info;
  return nullptr;
}

}  // namespace kiln_bench
