// The obtain step below the memory table, one key at a time: the binary
// from this process, a cache tier or the build path, linked here.
#include <chrono>
#include <exception>

#include "base/log.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;
using runtime::Obtained;

Obtained Runtime::Impl::obtain(runtime::Job& job, const ObtainPolicy& policy, detail::EntryFn& entry) {
  switch (linked_.claim(job.key, policy.lock_wait.has_value(), entry)) {
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
  if (!policy.build) return Obtained::busy;
  // A batch thread holds a slot before it claims a key: while every slot is
  // taken it claims nothing, and the holders of slots build the keys.
  runtime::BuildSlots::Slot* batch_slot = policy.batch_slot;
  if (batch_slot && !batch_slot->held()) {
    std::optional<runtime::BuildSlots::Slot> slot = builder_.take_slot(job, true);
    if (!slot) {
      if (from_disk()) return Obtained::loaded;
      slot = builder_.take_slot(job, false);  // published, then removed again (gc, clear): build it after all
    }
    *batch_slot = std::move(*slot);
  }
  const runtime::BuildPolicy build{.lock_wait = policy.lock_wait.value_or(std::chrono::milliseconds(0)),
                                   .busy_when_locked = !policy.lock_wait.has_value(),
                                   .slot_held = batch_slot != nullptr};
  runtime::Built built = builder_.build(job, build, from_disk);
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

void Runtime::Impl::obtain_waiting(runtime::Resolution& resolution) {
  for (std::size_t k = 0; k < resolution.keys(); ++k) {
    runtime::Outcome& outcome = resolution.outcomes[k];
    try {
      outcome.how = obtain(resolution.first_job(k), {.lock_wait = config_.lock_timeout}, outcome.entry);
    } catch (...) {
      outcome.error = std::current_exception();
    }
  }
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
