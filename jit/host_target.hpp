// The host CPU as LLVM sees it, without loading clang: triple, CPU name and
// features (what -march=native means). Goes into cache keys and into every
// compile request, so keys and objects always agree.
#pragma once

#include <string>

namespace kiln::jit {

struct HostTarget {
  std::string triple;    // "x86_64-pc-linux-gnu"
  std::string cpu;       // "znver3"
  std::string features;  // sorted, comma separated: "+avx,+avx2,...,-avx512f"
};

// Computed once per process.
const HostTarget& host_target();

}  // namespace kiln::jit
