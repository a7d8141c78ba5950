// How kernels are compiled for the CPU, from Config (opt_level, fp_contract, gather):
// checked once, when a Runtime is made, and as the cache key takes them.
#pragma once

#include <array>
#include <string>
#include <string_view>

#include "kiln/runtime.hpp"

namespace kiln::runtime {

inline constexpr std::array<std::string_view, 6> kOptLevels = {"O0", "O1", "O2", "O3", "Os", "Oz"};
inline constexpr std::array<std::string_view, 3> kFpContracts = {"on", "off", "fast"};
inline constexpr std::array<std::string_view, 3> kGathers = {"auto", "on", "off"};
// "native", an x86-64 level or an x86-64 CPU LLVM knows (jit::is_known_cpu).
bool is_target_cpu(std::string_view name);
inline constexpr const char* kTargetCpuChoices =
    "native, an x86-64 level (x86-64, x86-64-v2, x86-64-v3, x86-64-v4) or an x86-64 CPU LLVM knows (znver4, "
    "sapphirerapids, ...)";

struct CompileOptions {
  std::string opt_level = "-O3";  // as clang takes it
  std::string fp_contract = "on";
  std::string cpu;                // empty: the host's ("native")
  bool check = false;             // check mode (Config::check): bounds-checked views
  std::string gather = "auto";    // gather_as_built(): "auto", "on" or "off"
  // From `gather`: "" (auto: the CPU's tuning in LLVM decides,
  // jit/compiler/frontend.hpp), "+prefer-no-gather" (off: a scalar load per
  // lane) or "-prefer-no-gather" (on: gathers): the request's target features.
  std::string features;
  std::string key;                // what the cache key holds of the first two, check and features

  // What the key holds for a build at another level (Config's form, "O1"):
  // tiered start's stand-ins (Config::tiered_opt_level). Empty: `key`.
  std::string key_at(std::string_view level) const;
};

// Throws Error naming the Config field, the value and what it may be.
CompileOptions compile_options(const Config& config);

// Config::gather as kernels are built with it. "auto" for this host's CPU
// ("native") where its kernel reports Intel's microcode mitigation of Gather
// Data Sampling (Downfall, 2023) active is "off": the microcode makes each
// gather far slower than the scalar loads it replaces (Broadwell to Ice
// Lake), which LLVM's tuning for those CPUs ("fast-gather") does not know;
// clang leaves it to -mno-gather. A named CPU is built for other hosts: its
// "auto" stays LLVM's. The same code as "off", so the same key and recipe.
// `gds_report`: the first line of
// /sys/devices/system/cpu/vulnerabilities/gather_data_sampling.
std::string gather_as_built(const std::string& gather, const std::string& target_cpu, std::string_view gds_report);
std::string gather_as_built(const Config& config);  // with this host's report

}  // namespace kiln::runtime
