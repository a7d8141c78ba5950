// Resolving one kernel below the memory table: the key, then the binary from
// this process, a cache tier or the compiler, then the handle.
#include <chrono>
#include <filesystem>
#include <functional>

#include "base/log.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index_journal.hpp"
#include "cache/index_rebuild.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/cache_key.hpp"
#include "runtime/codegen.hpp"
#include "runtime/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

// Owns a key of Impl::in_flight for one thread: on every way out, publishes
// the binary it got (if any) and wakes the threads waiting for the key.
class Runtime::Impl::InFlight {
 public:
  InFlight(Runtime::Impl& impl, const cache::Key& key) : impl_(impl), key_(key) {}
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;
  ~InFlight() {
    {
      std::lock_guard lock(impl_.mutex);
      if (entry_) impl_.linked.emplace(key_, *entry_);
      impl_.in_flight.erase(key_);
    }
    impl_.key_done.notify_all();
  }
  void done(detail::EntryFn entry) { entry_ = entry; }

 private:
  Runtime::Impl& impl_;
  const cache::Key& key_;
  std::optional<detail::EntryFn> entry_;
};

Job Runtime::Impl::prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu) {
  auto start = Clock::now();
  Job job;
  job.name = name;
  job.spec = spec;
  job.mode = mode;
  job.info = &registry.get(name);
  job.bound = runtime::bind_spec(*job.info, spec);
  if (!job.specialised()) job.bound.strides.assign(job.bound.strides.size(), std::nullopt);
  job.metrics_name = job.specialised() ? job.info->name : job.info->name + " (generic)";
  job.specialise_ms = ms_since(start);

  // The key stands for the translation unit without generating it (see
  // codegen_identity()): only a miss generates source.
  start = Clock::now();
  runtime::KeyInputs inputs;
  inputs.kernel_source = job.info->source_digest;
  inputs.prelude = runtime::prelude_digest();
  inputs.specialisation = job.specialised() ? spec.canonical() : std::string_view();
  inputs.mode = job.specialised() ? "specialised" : "generic";
  if (gpu) {
    job.gpu = gpu_target(*gpu);
    job.metrics_name += " [" + job.gpu->backend + " " + job.gpu->arch + "]";
    inputs.backend = job.gpu->backend;
    inputs.triple = job.gpu->triple;
    inputs.cpu = job.gpu->arch;
    inputs.toolchain = job.gpu->toolchain;
    inputs.flags = job.gpu->flags;
  } else {
    const jit::HostTarget& target = toolchain.target();
    inputs.backend = "cpu";
    inputs.triple = target.triple;
    inputs.cpu = target.cpu;
    inputs.features = target.features;
    inputs.toolchain = runtime::Toolchain::fingerprint();
    inputs.flags = runtime::Toolchain::kOptLevel;
  }
  job.key = runtime::compute_key(inputs);
  job.symbol = "kiln_" + job.key.hex();
  metrics.record(job.metrics_name, "key", ms_since(start));
  return job;
}

std::optional<runtime::BuildSlots::Slot> Runtime::Impl::take_slot(const Job& job, bool until_published) {
  const auto start = Clock::now();
  const std::filesystem::path entry_file = store ? store->entry_path(job.key) : std::filesystem::path();
  const auto published = [&] {
    std::error_code ignored;
    return !entry_file.empty() && std::filesystem::exists(entry_file, ignored);
  };
  if (!slots->problem().empty())
    warn_once(slot_warning_given, "kiln: no node-wide limit on compiles (" + slots->problem() + ")");
  std::optional<runtime::BuildSlots::Slot> slot =
      slots->take(start + config.lock_timeout, until_published ? std::function<bool()>(published) : nullptr);
  metrics.record(job.metrics_name, "slot_wait", ms_since(start));
  if (slot && !slot->held() && slots->count() > 0 && slots->problem().empty())
    warn_once(cache_warning_given, "kiln: compiling " + job.metrics_name + " without a build slot: all " +
                                       std::to_string(slots->count()) + " in " + slots->folder().string() +
                                       " were taken for the whole lock timeout");
  return slot;
}

Obtained Runtime::Impl::obtain(Job& job, std::optional<std::chrono::milliseconds> lock_wait,
                               detail::EntryFn& entry, runtime::BuildSlots::Slot* batch_slot) {
  {
    std::unique_lock lock(mutex);
    for (;;) {
      if (const auto it = linked.find(job.key); it != linked.end()) {
        entry = it->second;
        return Obtained::linked;
      }
      if (in_flight.insert(job.key).second) break;
      if (!lock_wait) return Obtained::busy;
      key_done.wait(lock);  // another thread loads or builds it
    }
  }
  InFlight owned(*this, job.key);
  if (std::optional<detail::EntryFn> found = load_from_disk(job)) {
    owned.done(entry = *found);
    return Obtained::loaded;
  }
  // A batch thread holds a slot before it claims a key: while every slot is
  // taken it claims nothing, and the holders of slots build the keys.
  if (batch_slot && !batch_slot->held()) {
    std::optional<runtime::BuildSlots::Slot> slot = take_slot(job, true);
    if (!slot) {
      if (std::optional<detail::EntryFn> found = load_from_disk(job)) {
        owned.done(entry = *found);
        return Obtained::loaded;
      }
      slot = take_slot(job, false);  // published, then removed again (gc, clear): build it after all
    }
    *batch_slot = std::move(*slot);
  }
  // A miss: compile under the key's build lock, unless the process that held
  // it published the entry meanwhile. Released once the entry is stored.
  std::optional<cache::BuildLock> build_lock;
  std::string unlocked;  // why this build runs without the lock
  if (store) {
    const auto start = Clock::now();
    build_lock.emplace(
        cache::BuildLock::acquire(store->lock_path(job.key), lock_wait.value_or(std::chrono::milliseconds(0))));
    if (build_lock->outcome() == cache::BuildLock::Outcome::timed_out && !lock_wait) return Obtained::busy;
    metrics.record(job.metrics_name, "lock_wait", ms_since(start));
    if (build_lock->held()) {
      if (std::optional<detail::EntryFn> found = load_from_disk(job)) {
        owned.done(entry = *found);
        return Obtained::loaded;
      }
    } else {
      // Timed out, or a folder without locks: compile on our own and publish
      // by rename. Every writer writes the same bytes, so whichever rename
      // lands last is right.
      unlocked = build_lock->problem();
    }
  }
  // One at a time: a thread waiting here holds the key's lock, and a
  // batch thread that holds a slot only ever tries key locks, so no cycle.
  std::optional<runtime::BuildSlots::Slot> own_slot;
  if (!batch_slot) own_slot = take_slot(job, false);
  runtime::EntryFile stored;
  const std::vector<char> binary = compile_and_store(job, &stored);
  owned.done(entry = load(job, binary, stored.path.empty() ? nullptr : &stored));
  own_slot.reset();
  // Said after the store: when the folder cannot be written at all, the
  // store's warning (the one that matters) comes first, and this one not at all.
  if (!unlocked.empty())
    warn_once(cache_warning_given,
              "kiln cache: compiled " + job.metrics_name + " without the build lock (" + unlocked + ")");
  return Obtained::built;
}

const detail::ResolvedKernel& Runtime::Impl::publish(Job& job, detail::EntryFn entry, bool from_memory) {
  auto resolved = std::make_unique<detail::ResolvedKernel>();
  resolved->params = std::move(job.bound.values);
  resolved->info = job.info;
  for (const runtime::ArgDecl& arg : job.info->args)
    resolved->signature.push_back(detail::signature_of(static_cast<std::int32_t>(arg.type), arg.rank));
  resolved->specialised = job.specialised();
  resolved->key = job.key;
  resolved->metrics_name = job.metrics_name;
  resolved->metrics = config.time_calls ? &metrics : nullptr;
  resolved->memory_hits = from_memory ? 1 : 0;  // the binary came from memory
  resolved->call = {.entry = entry,
                    .params = resolved->params.data(),
                    .signature = resolved->signature.data(),
                    .count = resolved->signature.size(),
                    .timed = resolved->metrics != nullptr,
                    .owner = resolved.get()};
  metrics.record(job.metrics_name, "specialise", job.specialise_ms);
  runtime::MemoryKey memory_key{job.name, job.mode, job.spec.canonical(), job.spec.hash()};
  std::lock_guard lock(mutex);
  // Two threads may resolve the same request at once: the first one's stays.
  return *memory.emplace(std::move(memory_key), std::move(resolved)).first->second;
}

std::filesystem::path Runtime::Impl::index_path() const {
  return config.index_path.empty() ? config.cache_dir / "index.sqlite" : config.index_path;
}

cache::Index* Runtime::Impl::open_index() {
  if (!store || config.index_path == "off") return nullptr;
  std::lock_guard lock(mutex);
  // A corrupt index is rebuilt from the entries (once, with a warning).
  if (!index) index = cache::open_or_rebuild_index(index_path(), *store);
  return index->usable() ? index.get() : nullptr;
}

// The read-only tiers first (a cache shipped with an application), then the
// writable one.
cache::LookupResult Runtime::Impl::lookup_entry(const Job& job) {
  const auto start = Clock::now();
  cache::LookupResult found;
  for (const cache::DiskStore& tier : read_only_tiers) {
    if ((found = tier.get(job.key)).payload) break;
  }
  if (!found.payload && store) found = store->get(job.key);  // a rejected entry was logged and is rebuilt
  metrics.record(job.metrics_name, "disk_lookup", ms_since(start));
  return found;
}

std::optional<std::vector<char>> Runtime::Impl::read_entry(const Job& job) { return std::move(lookup_entry(job).payload); }

std::optional<detail::EntryFn> Runtime::Impl::load_from_disk(const Job& job) {
  const cache::LookupResult found = lookup_entry(job);  // holds the entry open while it is mapped
  if (!found.payload) return std::nullopt;
  const runtime::EntryFile file{found.file, found.file_device, found.file_inode, found.descriptor.fd()};
  const auto start = Clock::now();
  try {
    void* address = toolchain.load(*found.payload, &file, job.symbol, job.metrics_name);
    metrics.record(job.metrics_name, "load", ms_since(start));
    metrics.count_disk_hit(job.metrics_name);
    std::lock_guard lock(mutex);
    disk_hits.push_back(job.key);
    return reinterpret_cast<detail::EntryFn>(address);
  } catch (const std::exception& e) {
    // A checksummed entry that does not load was written by something else
    // (or for another C library): never run it, rebuild it.
    base::log().warn("cache entry {} does not load ({}); compiling again", job.key.hex(), e.what());
    return std::nullopt;
  }
}

detail::EntryFn Runtime::Impl::load(const Job& job, std::span<const char> binary, const runtime::EntryFile* file) {
  const auto start = Clock::now();
  void* address = toolchain.load(binary, file, job.symbol, job.metrics_name);
  metrics.record(job.metrics_name, "load", ms_since(start));
  return reinterpret_cast<detail::EntryFn>(address);
}

std::vector<char> Runtime::Impl::compile_and_store(Job& job, runtime::EntryFile* stored) {
  auto start = Clock::now();
  const std::string source =
      runtime::generate_source(*job.info, job.bound, job.specialised(), kernels_src::prelude().text, job.symbol);
  job.specialise_ms += ms_since(start);

  start = Clock::now();
  jit::CompileOutput out = toolchain.compile(source, job.info->file_name);
  const double compile_ms = ms_since(start);
  metrics.record(job.metrics_name, "compile", compile_ms);
  if (!out.ok) throw CompileError(job.info->name, out.diagnostics);
  metrics.count_compile(job.metrics_name);

  if (store) {
    // The entry carries its index record, so a lost index can be rebuilt.
    const cache::IndexRecord record{job.key, job.metrics_name, job.spec.to_json(), "cpu",
                                    toolchain.target_description(), out.binary.size(), compile_ms};
    start = Clock::now();
    const cache::PutResult put = store->put(job.key, out.binary, cache::encode_metadata(record));
    metrics.record(job.metrics_name, "store", ms_since(start));
    if (!put.ok) {
      warn_once(cache_warning_given,
                "cannot store in the kernel cache (" + put.error + "); going on with in-memory kernels");
    } else {
      {
        std::lock_guard lock(mutex);
        stored_entries = true;
      }
      if (stored != nullptr) stored->path = store->entry_path(job.key);
      if (const auto path = journal()) after_append(cache::append_stored(*path, record));
    }
  }
  return std::move(out.binary);
}

void Runtime::Impl::warn_once(bool& given, const std::string& message) {
  {
    std::lock_guard lock(mutex);
    if (given) return;
    given = true;
  }
  base::log().warn("{}", message);
}

}  // namespace kiln
