// Runtime's state: the parts it is made of, each owning its data and its
// lock. This file wires them together; each part's header says what it owns.
//   resolve/   this file, the public face (runtime.cpp), one kernel
//              (resolve.cpp), many at once (batch.cpp), the key (prepare.cpp),
//              a GPU kernel and the GPU precompile (gpu_kernel.cpp, gpu_precompile.cpp)
//   compile/   the one build path: build lock, cache again, compile, store
//   store/     the cache tiers, the index and its journal
//   load/      binaries into this process
//   gpu/       GPU targets, the driver, launches and loaded GPU kernels
//   kernels/   the registry, parsing, binding, code generation, keys
//   metrics/   phase timings and counts
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/compile/build_path.hpp"
#include "runtime/compile/cpu_compiler.hpp"
#include "runtime/compile/job.hpp"
#include "runtime/call/resolved_kernel.hpp"
#include "runtime/gpu/gpu_kernels.hpp"
#include "runtime/kernels/registry.hpp"
#include "runtime/load/cpu_loader.hpp"
#include "runtime/metrics/metrics.hpp"
#include "runtime/resolve/linked_binaries.hpp"
#include "runtime/resolve/memory_table.hpp"
#include "runtime/resolve/tiered_builds.hpp"
#include "runtime/store/cache_tiers.hpp"

namespace kiln {

// How a key's binary was obtained, or why not yet.
enum class Obtained {
  linked,  // already linked in this process (by this or another thread)
  loaded,  // from a cache tier on disk
  built,   // compiled here
  busy,    // another thread or process is building it; only when not waiting
};

class Runtime::Impl {
 public:
  explicit Impl(Config c);

  const Config& config() const { return config_; }
  runtime::Registry& registry() { return registry_; }
  runtime::Metrics& metrics() { return metrics_; }
  runtime::MemoryTable& memory() { return memory_; }
  runtime::LinkedBinaries& linked() { return linked_; }
  runtime::CacheTiers& cache() { return cache_; }
  runtime::BuildPath& builder() { return builder_; }
  runtime::GpuKernels& gpu_kernels() { return gpu_kernels_; }
  runtime::TieredBuilds& tiered() { return tiered_; }

  // prepare.cpp: the job for a request, key included, without generating
  // source. A CPU job to load here is refused (LoadError) when this host
  // cannot run its target; `to_load` false: only into the cache.
  runtime::Job prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu = nullptr,
                       bool to_load = true);

  // resolve.cpp. The binary for job.key. With lock_wait, waits for this
  // process's other threads and at most lock_wait for other processes, then
  // compiles; without it, returns Obtained::busy rather than wait for another
  // builder. A batch thread passes the build slot it keeps from one kernel
  // to the next (build_slots.hpp): it takes one before it claims a key.
  Obtained obtain(runtime::Job& job, std::optional<std::chrono::milliseconds> lock_wait, detail::EntryFn& entry,
                  runtime::BuildSlots::Slot* batch_slot = nullptr);
  // The handle's target, in the memory table (the first of two threads' stays).
  const detail::ResolvedKernel& publish(runtime::Job& job, detail::EntryFn entry, bool from_memory);
  // tiered_start.cpp (Config::tiered): a specialised job's handle. Its own
  // build when this process or a cache tier has it; else the generic build
  // (linked, from the cache, or compiled now), with the specialised build
  // queued on tiered() to replace it.
  const detail::ResolvedKernel& resolve_tiered(runtime::Job& job);
  // Into this process: maps `file` when given (holding `binary`), else a copy of `binary`.
  detail::EntryFn load(const runtime::Job& job, std::span<const char> binary, const runtime::EntryFile* file = nullptr);

  // precompile.cpp: a build into the cache, nothing loaded (a GPU needs no
  // driver; a CPU target need not run here). True when the cache had it;
  // `binary`, when given, receives it.
  bool precompile(runtime::Job& job, std::vector<char>* binary = nullptr);

  // runtime.cpp: at the Runtime's end.
  MetricsSnapshot snapshot();
  void finish();

 private:
  std::optional<detail::EntryFn> load_from_disk(const runtime::Job& job);
  // publish()'s kernel, not yet in the memory table.
  std::unique_ptr<detail::ResolvedKernel> make_resolved(runtime::Job& job, detail::EntryFn entry, bool from_memory);

  Config config_;
  runtime::Registry registry_;
  runtime::Metrics metrics_;
  runtime::CpuCompiler compiler_;
  runtime::CpuLoader loader_;
  runtime::CacheTiers cache_;  // after config_ and metrics_, which it keeps references to
  runtime::BuildPath builder_;
  runtime::LinkedBinaries linked_;
  runtime::MemoryTable memory_;
  runtime::GpuKernels gpu_kernels_;
  // Last: its thread, which uses the parts above, is joined first.
  runtime::TieredBuilds tiered_{[this](runtime::Job& job) {
    detail::EntryFn entry = nullptr;
    obtain(job, config_.lock_timeout, entry);
    return entry;
  }};
};

}  // namespace kiln
