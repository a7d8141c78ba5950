// The host CPU's identity, read without LLVM and without executing CPUID
// (a VM exit, ~6.5 µs each where this was measured: LLVM's getHostCPUName and
// getHostCPUFeatures execute ~20 of them, ~0.15 ms of every warm process).
// It goes into cache keys: everything LLVM derives -march=native from (vendor,
// family, model, stepping, every feature bit and what the OS enables) is in it,
// so two hosts with the same identity get the same code. The compiler module
// asks LLVM for the CPU name and features only when it compiles.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kiln::jit {

struct HostTarget {
  std::string triple;    // "x86_64-pc-linux-gnu", as LLVM was configured
  std::string cpu;       // "GenuineIntel family 6 model 143 stepping 8"
  std::string features;  // the feature leaves, hex (x86: CPUID as glibc cached it, and glibc's usable bits)
};

// Computed once per process.
const HostTarget& host_target();

// The x86-64 micro-architecture levels of the psABI (x86-64, x86-64-v2,
// x86-64-v3, x86-64-v4): what kiln compiles for instead of the host, so that
// a cache warmed on one machine serves others of the level. LLVM takes them
// as CPU names. False on other architectures.
bool is_cpu_level(std::string_view name);
// The features of `level` this CPU lacks (as glibc found them usable, so the
// OS's support counts, and GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F hides
// one), by glibc's names; empty when code built for the level runs here.
// `level` must be one (is_cpu_level).
std::vector<std::string> missing_features(std::string_view level);

}  // namespace kiln::jit
