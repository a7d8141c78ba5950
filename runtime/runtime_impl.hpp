// Runtime's state, shared by runtime.cpp (the public face), resolve.cpp (one
// kernel: memory, disk, compiler) and batch.cpp (many kernels in a pool).
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <tuple>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "cache/build_lock.hpp"
#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "jit/rtc_library.hpp"
#include "kiln/runtime.hpp"
#include "runtime/bound_spec.hpp"
#include "runtime/build_slots.hpp"
#include "runtime/memory_table.hpp"
#include "runtime/metrics.hpp"
#include "runtime/gpu_resolved.hpp"
#include "runtime/registry.hpp"
#include "runtime/resolved_kernel.hpp"
#include "runtime/toolchain.hpp"

namespace kiln {

// A GPU build's compiler and architecture (gpu_precompile.cpp).
struct GpuJob {
  std::string backend;    // "cuda" | "hip"
  std::string triple;     // nvptx64-nvidia-cuda | amdgcn-amd-amdhsa
  std::string arch;       // "sm_90", "compute_90", "gfx90a"
  std::string toolchain;  // the compiler's identity: version and library file
  std::string flags;      // its options
  std::function<jit::GpuCompileOutput(const std::string& source, const std::string& file_name)> compile;
};
// Checks the target: throws ToolchainError when its compiler (NVRTC,
// hipRTC) is missing, Error for an architecture it does not know or support.
GpuJob gpu_target(const GpuTarget& target);
// The GPU compiler (jit::Nvrtc, jit::Hiprtc), or a ToolchainError saying what is missing.
template <class Compiler>
const Compiler& compiler_or_throw();

// One (kernel, specialisation, mode) on its way to a binary: everything the
// key stands for, computed without generating source.
struct Job {
  std::string name;  // as requested
  Spec spec;
  Mode mode = Mode::specialised;
  const runtime::KernelInfo* info = nullptr;
  runtime::BoundSpec bound;
  cache::Key key;
  std::string symbol;
  std::string metrics_name;
  double specialise_ms = 0.0;  // binding; a miss adds generating the source
  std::optional<GpuJob> gpu;   // set for a GPU build
  bool specialised() const { return mode == Mode::specialised; }
};

// How a key's binary was obtained, or why not yet.
enum class Obtained {
  linked,  // already linked in this process (by this or another thread)
  loaded,  // from a cache tier on disk
  built,   // compiled here
  busy,    // another thread or process is building it; only when not waiting
};

struct Runtime::Impl {
  Config config;
  runtime::Registry registry;
  runtime::Metrics metrics;
  runtime::Toolchain toolchain;
  std::vector<cache::DiskStore> read_only_tiers;  // searched first, never written
  std::optional<cache::DiskStore> store;          // the writable tier
  std::unique_ptr<cache::Index> index;            // opened on first use, under mutex
  std::optional<runtime::BuildSlots> slots;       // the node-wide compile limit

  // Guards everything below. Held only for table updates, never while a
  // kernel is loaded or compiled: other keys resolve meanwhile.
  std::mutex mutex;
  std::condition_variable key_done;  // a key left in_flight
  runtime::MemoryTable memory;
  // Binaries linked in this process, by key: a generic build serves every
  // specialisation, and is linked once.
  std::unordered_map<cache::Key, detail::EntryFn, cache::KeyHash> linked;
  // Keys a thread of this process is loading or building: another thread
  // asking for one waits for it rather than building it again.
  std::unordered_set<cache::Key, cache::KeyHash> in_flight;
  std::vector<cache::Key> disk_hits;  // noted in the index when the runtime ends
  bool stored_entries = false;        // the end then applies KILN_CACHE_MAX_SIZE
  // One warning per Runtime about the cache folder: a read-only or full
  // folder fails the build lock and the store alike.
  bool cache_warning_given = false;
  bool slot_warning_given = false;

  explicit Impl(Config c);
  class InFlight;

  // resolve.cpp
  Job prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu = nullptr);
  // gpu_precompile.cpp: a GPU build into the cache (no loading: no driver needed).
  // True when the cache had it; `binary`, when given, receives it.
  bool precompile(Job& job, std::vector<char>* binary = nullptr);
  // gpu_launch.cpp: kernels loaded on GPUs, by (name, mode, spec, device).
  std::map<std::tuple<std::string, Mode, std::string, int>, std::unique_ptr<detail::GpuResolved>> gpu_kernels;
  // The binary for job.key. With lock_wait, waits for this process's other
  // threads and at most lock_wait for other processes, then compiles; without
  // it, returns Obtained::busy rather than wait for another builder.
  // A batch thread passes the build slot it keeps from one kernel to the
  // next (build_slots.hpp): it takes one before it claims a key.
  Obtained obtain(Job& job, std::optional<std::chrono::milliseconds> lock_wait, detail::EntryFn& entry,
                  runtime::BuildSlots::Slot* batch_slot = nullptr);
  // Waits for a build slot (see obtain()); nullopt when the job's entry
  // appeared in the cache meanwhile.
  std::optional<runtime::BuildSlots::Slot> take_slot(const Job& job, bool until_published);
  const detail::ResolvedKernel& publish(Job& job, detail::EntryFn entry, bool from_memory);

  cache::Index* open_index();  // folds the hit journal in when it opens it
  std::filesystem::path index_path() const;
  std::optional<std::filesystem::path> journal() const;  // the index's journal, when the index is in use
  void after_append(std::uint64_t journal_size);
  void note_disk_hits();  // at the end: this Runtime's disk hits into the journal
  // The entry from a cache tier (read-only ones first), verified. A hit
  // names the entry file and holds it open, for the CPU loader to map.
  cache::LookupResult lookup_entry(const Job& job);
  // Its payload alone.
  std::optional<std::vector<char>> read_entry(const Job& job);
  std::optional<detail::EntryFn> load_from_disk(const Job& job);
  // Compiles and stores the object (adding source generation to
  // job.specialise_ms); throws CompileError.
  // `stored` (when given) names the entry file when the binary was stored.
  std::vector<char> compile_and_store(Job& job, runtime::EntryFile* stored = nullptr);
  // Into this process: maps `file` when given (holding `binary`), else a copy of `binary`.
  detail::EntryFn load(const Job& job, std::span<const char> binary, const runtime::EntryFile* file = nullptr);
  void warn_once(bool& given, const std::string& message);

  // runtime.cpp
  void tidy_cache();
  MetricsSnapshot snapshot();
  void finish();
};

}  // namespace kiln
