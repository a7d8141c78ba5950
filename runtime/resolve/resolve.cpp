// Resolving one kernel below the memory table: the binary from this process,
// a cache tier or the build path, then the handle.
#include <chrono>

#include "base/log.hpp"
#include "runtime/call/threads.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

Obtained Runtime::Impl::obtain(runtime::Job& job, std::optional<std::chrono::milliseconds> lock_wait,
                               detail::EntryFn& entry, runtime::BuildSlots::Slot* batch_slot) {
  switch (linked_.claim(job.key, lock_wait.has_value(), entry)) {
    case runtime::LinkedBinaries::Claim::linked: return Obtained::linked;
    case runtime::LinkedBinaries::Claim::busy: return Obtained::busy;
    case runtime::LinkedBinaries::Claim::claimed: break;
  }
  runtime::InFlight owned(linked_, job.key);
  const auto from_disk = [&] {
    const std::optional<detail::EntryFn> found = load_from_disk(job);
    if (found) owned.done(entry = *found);
    return found.has_value();
  };
  if (from_disk()) return Obtained::loaded;
  // A batch thread holds a slot before it claims a key: while every slot is
  // taken it claims nothing, and the holders of slots build the keys.
  if (batch_slot && !batch_slot->held()) {
    std::optional<runtime::BuildSlots::Slot> slot = builder_.take_slot(job, true);
    if (!slot) {
      if (from_disk()) return Obtained::loaded;
      slot = builder_.take_slot(job, false);  // published, then removed again (gc, clear): build it after all
    }
    *batch_slot = std::move(*slot);
  }
  const runtime::BuildPolicy policy{.lock_wait = lock_wait.value_or(std::chrono::milliseconds(0)),
                                    .busy_when_locked = !lock_wait.has_value(),
                                    .slot_held = batch_slot != nullptr};
  runtime::Built built = builder_.build(job, policy, from_disk);
  switch (built.how) {
    case runtime::Built::How::busy: return Obtained::busy;
    case runtime::Built::How::found: return Obtained::loaded;
    case runtime::Built::How::built: break;
  }
  // The entry just stored is mapped from its file when it still holds these bytes.
  runtime::EntryFile stored;
  if (built.stored) stored.path = *built.stored;
  owned.done(entry = load(job, built.binary, built.stored ? &stored : nullptr));
  return Obtained::built;
}

std::unique_ptr<detail::ResolvedKernel> Runtime::Impl::make_resolved(runtime::Job& job, detail::EntryFn entry,
                                                                     bool from_memory) {
  auto resolved = std::make_unique<detail::ResolvedKernel>();
  resolved->params = std::move(job.bound.values);
  resolved->info = job.info;
  for (std::size_t i = 0; i < job.info->args.size(); ++i) {
    const lang::ArgDecl& arg = job.info->args[i];
    resolved->signature.push_back(
        detail::signature_of(static_cast<std::int32_t>(arg.type), lang::passed_rank(arg.rank, job.bound.nproma[i])));
  }
  resolved->strides = job.bound.strides;
  resolved->nproma = job.bound.nproma;
  resolved->nblks = job.bound.nblks;
  resolved->specialised = job.specialised();
  resolved->key = job.key;
  resolved->metrics_name = job.metrics_name;
  resolved->metrics = config_.time_calls ? &metrics_ : nullptr;
  if (from_memory) resolved->memory_hits.add();  // the binary came from memory
  if (!job.info->temporaries.empty())
    resolved->temporaries = std::make_unique<runtime::Temporaries>(*job.info, metrics_, job.metrics_name);
  resolved->check = config_.check;
  // Check mode stops a kernel at its first violation, on one thread: the
  // others would wait at the next phase's barrier for ever.
  const int threads = config_.check ? 1 : config_.threads > 0 ? config_.threads : runtime::openmp_threads();
  resolved->call = {.entry = entry,
                    .params = resolved->params.data(),
                    .signature = resolved->signature.data(),
                    .count = resolved->signature.size(),
                    .out_of_line = resolved->metrics != nullptr || resolved->temporaries != nullptr || config_.check ||
                                   threads > 1,
                    .threads = threads,
                    .owner = resolved.get()};
  metrics_.record(job.metrics_name, "specialise", job.specialise_ms);
  return resolved;
}

const detail::ResolvedKernel& Runtime::Impl::publish(runtime::Job& job, detail::EntryFn entry, bool from_memory) {
  runtime::MemoryKey memory_key{job.name, job.mode, job.spec.canonical(), job.spec.hash()};
  return memory_.insert(std::move(memory_key), make_resolved(job, entry, from_memory));
}

std::optional<detail::EntryFn> Runtime::Impl::load_from_disk(const runtime::Job& job) {
  const cache::LookupResult found = cache_.lookup(job.key, job.metrics_name);  // holds the entry open while mapped
  if (!found.payload) return std::nullopt;
  const runtime::EntryFile file{found.file, found.file_device, found.file_inode, found.descriptor.fd()};
  const auto start = Clock::now();
  try {
    void* address = loader_.load(*found.payload, &file, job.symbol, job.metrics_name);
    metrics_.record(job.metrics_name, "load", ms_since(start));
    metrics_.count_disk_hit(job.metrics_name);
    cache_.note_hit(job.key);
    return reinterpret_cast<detail::EntryFn>(address);
  } catch (const std::exception& e) {
    // A checksummed entry that does not load was written by something else
    // (or for another C library): never run it, rebuild it.
    base::log().warn("cache entry {} does not load ({}); compiling again", job.key.hex(), e.what());
    return std::nullopt;
  }
}

detail::EntryFn Runtime::Impl::load(const runtime::Job& job, std::span<const char> binary,
                                    const runtime::EntryFile* file) {
  const auto start = Clock::now();
  void* address = loader_.load(binary, file, job.symbol, job.metrics_name);
  metrics_.record(job.metrics_name, "load", ms_since(start));
  return reinterpret_cast<detail::EntryFn>(address);
}

}  // namespace kiln
