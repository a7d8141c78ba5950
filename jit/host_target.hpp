// The host CPU's identity, read without LLVM and without executing CPUID
// (a VM exit, ~6.5 µs each where this was measured: LLVM's getHostCPUName and
// getHostCPUFeatures execute ~20 of them, ~0.15 ms of every warm process).
// It goes into cache keys: everything LLVM derives -march=native from (vendor,
// family, model, stepping, every feature bit and what the OS enables) is in it,
// so two hosts with the same identity get the same code. The compiler module
// asks LLVM for the CPU name and features only when it compiles.
#pragma once

#include <string>

namespace kiln::jit {

struct HostTarget {
  std::string triple;    // "x86_64-pc-linux-gnu", as LLVM was configured
  std::string cpu;       // "GenuineIntel family 6 model 143 stepping 8"
  std::string features;  // the feature leaves, hex (x86: CPUID as glibc cached it, and glibc's usable bits)
};

// Computed once per process.
const HostTarget& host_target();

}  // namespace kiln::jit
