// The host CPU's identity, read without LLVM and without executing CPUID
// (a VM exit, ~6.5 µs each where this was measured: LLVM's getHostCPUName and
// getHostCPUFeatures execute ~20 of them, ~0.15 ms of every warm process).
// It goes into cache keys: everything LLVM derives -march=native from (vendor,
// family, model, stepping, every feature bit and what the OS enables) is in it,
// so two hosts with the same identity get the same code. The compiler module
// asks LLVM for the CPU name and features only when it compiles.
#pragma once

#include <cstddef>
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

// What kiln compiles for instead of the host, so that a cache warmed on one
// machine serves others: the x86-64 micro-architecture levels of the psABI
// (x86-64, x86-64-v2, x86-64-v3, x86-64-v4), or a CPU LLVM knows ("znver4",
// "sapphirerapids"; the list and each CPU's features were taken from LLVM
// when kiln was built, kCpuTable). False on other architectures.
bool is_cpu_level(std::string_view name);
bool is_known_cpu(std::string_view name);
// The features of `cpu` (a level or a known CPU) this CPU lacks (by glibc's
// names for a level, LLVM's for a named CPU), as glibc found them usable (so the OS's support counts, and
// GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F hides one); empty when code built
// for `cpu` runs here. Of a named CPU's features those LLVM's code generator
// may use in plain code are checked; the others (x87, crc32, fsgsbase,
// amx-*, rdrnd, ...) are implied by one checked, or only intrinsics and the
// OS use them.
std::vector<std::string> missing_features(std::string_view cpu);

// Built from LLVM (jit/cpu_table_main.cpp): each x86-64 CPU name and the
// features LLVM compiles for it, comma-separated, LLVM's names.
struct CpuFeatures {
  const char* name;
  const char* features;
};
extern const CpuFeatures kCpuTable[];
extern const std::size_t kCpuTableSize;

}  // namespace kiln::jit
