// The one way a binary is built, whoever asks (one kernel, a batch, a
// collective resolution, a GPU precompile): take the key's build lock, look
// in the cache again under it (the holder may have published the entry while
// this process waited), take a build slot, compile, store, journal.
#pragma once

#include <chrono>
#include <filesystem>
#include <functional>
#include <optional>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/compile/build_slots.hpp"
#include "runtime/compile/cpu_compiler.hpp"
#include "runtime/compile/job.hpp"
#include "runtime/metrics/metrics.hpp"
#include "runtime/store/cache_tiers.hpp"

namespace kiln::runtime {

// The translation unit `job` compiles from: kiln's code generator over the
// embedded prelude, for the job's GPU or the CPU (check mode when `check`).
// What a build compiles and what Runtime::generated_source shows.
std::string job_source(const Job& job, bool check);

struct BuildPolicy {
  // How long to wait for another process that holds the key's build lock.
  std::chrono::milliseconds lock_wait{0};
  // Still locked after lock_wait: return busy instead of building (a batch
  // builds other keys meanwhile). Otherwise build without the lock.
  bool busy_when_locked = false;
  // A batch thread brings the build slot it keeps from one kernel to the
  // next; others take one here, after the build lock.
  bool slot_held = false;
};

struct Built {
  enum class How {
    found,  // look_again() found it in the cache once the lock was held
    built,  // compiled here: `binary`, and `stored` when the cache took it
    busy,   // locked by another builder (busy_when_locked only)
  };
  How how = How::busy;
  std::vector<char> binary;
  std::optional<std::filesystem::path> stored;
};

class BuildPath {
 public:
  BuildPath(const Config& config, CacheTiers& cache, CpuCompiler& compiler, Metrics& metrics);

  // `look_again` looks in the cache and takes what it finds (true) or not.
  // Throws CompileError, ToolchainError.
  [[nodiscard]] Built build(Job& job, const BuildPolicy& policy, const std::function<bool()>& look_again);

  // Waits for a build slot, at most the lock timeout; with
  // `until_published`, nullopt as soon as the job's entry appears in the
  // cache. A free pass (an unheld slot) after the timeout.
  [[nodiscard]] std::optional<BuildSlots::Slot> take_slot(const Job& job, bool until_published);

 private:
  struct Compiled {
    std::vector<char> binary;
    double compile_ms = 0.0;
    std::string backend;  // "cpu", "cuda", "hip"
    std::string target;   // what the index records as the target
    std::string compiler;  // the compiler's identity, with its fixed flags
  };
  // How `job` was compiled, for the entry (kiln cache show).
  cache::BuildRecipe recipe(const Job& job, const Compiled& compiled) const;
  Compiled compile(Job& job);  // CPU or GPU; throws CompileError, ToolchainError (cannot_build())
  std::string cannot_build(const Job& job, const std::string& cause) const;
  void warn_slots_once(const std::string& message);

  const Config& config_;
  CacheTiers& cache_;
  CpuCompiler& compiler_;
  Metrics& metrics_;
  BuildSlots slots_;
  std::atomic<bool> slot_warning_given_{false};
};

}  // namespace kiln::runtime
