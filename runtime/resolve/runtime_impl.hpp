// Runtime's state: the parts it is made of, each owning its data and its
// lock. This file wires them together; each part's header says what it owns.
//   resolve/   this file, the public face (runtime.cpp), the resolution loop
//              every kind of resolution runs (pipeline.hpp: prepare, obtain,
//              publish) and its steps: the key (prepare.cpp), one key below
//              the memory table (obtain.cpp), many on build threads
//              (build_pool.cpp, batch.cpp), handles (publish.cpp), tiered
//              start, the bytes without loading (precompile.cpp), a GPU
//              kernel (gpu_kernel.cpp, gpu_precompile.cpp)
//   collective/ the loop's obtain step over a group (MPI ranks)
//   compile/   the one build path: build lock, cache again, compile, store
//   store/     the cache tiers, the index and its journal
//   load/      binaries into this process
//   gpu/       GPU targets, the driver, launches and loaded GPU kernels
//   kernels/   the registry, parsing, binding, code generation, keys
//   metrics/   phase timings and counts
#pragma once

#include <chrono>
#include <functional>
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
#include "runtime/resolve/pipeline.hpp"
#include "runtime/resolve/tiered_builds.hpp"
#include "runtime/store/cache_tiers.hpp"

namespace kiln {

// How Impl::obtain gets one key's binary.
struct ObtainPolicy {
  // Waits for this process's other threads and at most this long for other
  // processes, then compiles; nullopt: busy rather than wait for another builder.
  std::optional<std::chrono::milliseconds> lock_wait;
  // A batch thread passes the build slot it keeps from one kernel to the
  // next (build_slots.hpp): it takes one before it claims a key.
  runtime::BuildSlots::Slot* batch_slot = nullptr;
  // false: only what is linked or in a cache tier, else busy (tiered start's first look).
  bool build = true;
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
  // cannot run its target; `to_load` false: only into the cache. A CPU job
  // at `opt_level` ("O1") when given, else at Config::opt_level.
  runtime::Job prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu = nullptr,
                       bool to_load = true, std::string_view opt_level = {});
  // The jobs of the requests that `out` holds no handle for yet; a request
  // that does not prepare is the resolution's error, the others go on.
  runtime::Resolution prepare_all(std::span<const KernelRequest> requests, std::span<const Kernel> out);

  // obtain.cpp: the binary for job.key, linked into this process.
  runtime::Obtained obtain(runtime::Job& job, const ObtainPolicy& policy, detail::EntryFn& entry);
  // The obtain step of one kernel: each key in turn, waiting for other builders.
  void obtain_waiting(runtime::Resolution& resolution);
  // build_pool.cpp: the obtain step of a batch, on config().build_threads
  // threads; a key another builder holds is tried again later.
  void obtain_pooled(runtime::Resolution& resolution);
  // tiered_start.cpp (Config::tiered): the obtain step of one specialised
  // kernel. Its own build when this process or a cache tier has it; else the
  // generic build (linked, from the cache, or compiled now) stands in.
  void obtain_tiered(runtime::Resolution& resolution);
  // The same for a batch (Runtime::kernels): the generic builds that stand in,
  // and the generic requests, on the build pool (obtain_pooled).
  void obtain_tiered_pooled(runtime::Resolution& resolution);
  // precompile.cpp: the obtain step into the cache, nothing loaded (a GPU
  // needs no driver; a CPU target need not run here). The bytes go to each
  // Outcome::binary when `keep`.
  void obtain_bytes(runtime::Resolution& resolution, bool keep);
  // The build path's bytes for job.key into `binary`: `look_again` reads
  // the cache under the key's build lock (loaded: it found them), else they
  // are compiled here (built).
  runtime::Obtained build_bytes(runtime::Job& job, const std::function<std::optional<std::vector<char>>()>& look_again,
                                std::vector<char>& binary);

  // publish.cpp: the publish step of a CPU kernel: the handle's target, in
  // the memory table (the first of two threads' stays). A stand-in queues
  // the specialised build on tiered() (publish_stand_in, tiered_start.cpp).
  const detail::ResolvedKernel& publish(runtime::Job& job, const runtime::Outcome& outcome, bool repeat);
  // Into this process: maps `file` when given (holding `binary`), else a copy of `binary`.
  detail::EntryFn load(const runtime::Job& job, std::span<const char> binary, const runtime::EntryFile* file = nullptr);

  // runtime.cpp: Runtime::kernel's miss, through the loop (tiered start's
  // obtain step for a specialised kernel with Config::tiered).
  const detail::ResolvedKernel& resolve_one(std::string_view name, const Spec& spec, Mode mode);
  // At the Runtime's end.
  MetricsSnapshot snapshot();
  void finish();

 private:
  std::optional<detail::EntryFn> load_from_disk(const runtime::Job& job);
  // publish()'s kernel, not yet in the memory table.
  std::unique_ptr<detail::ResolvedKernel> make_resolved(runtime::Job& job, detail::EntryFn entry, bool from_memory);
  // tiered_start.cpp: one specialised job's outcome, and its handle.
  runtime::Outcome tiered_outcome(runtime::Job& job);
  // The generic build that stands in for a specialised job: at
  // Config::opt_level when linked or in a cache tier (`found` then holds it)
  // or among the keys `building` obtains anyway (a batch's generic requests),
  // else at Config::tiered_opt_level, for the caller to obtain.
  runtime::Job stand_in_job(const runtime::Job& job, runtime::Outcome& found,
                            const runtime::Resolution* building = nullptr);
  const detail::ResolvedKernel& publish_stand_in(runtime::Job& job, const runtime::Outcome& outcome, bool from_memory);

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
    obtain(job, {.lock_wait = config_.lock_timeout}, entry);
    return entry;
  }};
};

}  // namespace kiln
