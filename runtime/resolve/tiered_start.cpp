// Tiered start (Config::tiered, docs/manual/tiered-start.md): a miss returns
// the generic build at once and the specialised build replaces it later.
#include "base/log.hpp"
#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

const detail::ResolvedKernel& Runtime::Impl::resolve_tiered(runtime::Job& job) {
  // Its own build when this process has it or a cache tier holds it: nothing
  // to wait for, so nothing to tier. A key another thread is building is left
  // to it (the queued build below then waits for it, not this call).
  detail::EntryFn entry = nullptr;
  std::optional<detail::EntryFn> found;
  switch (linked_.claim(job.key, false, entry)) {
    case runtime::LinkedBinaries::Claim::linked: return publish(job, entry, true);
    case runtime::LinkedBinaries::Claim::busy: break;
    case runtime::LinkedBinaries::Claim::claimed: {
      runtime::InFlight owned(linked_, job.key);
      if ((found = load_from_disk(job))) owned.done(*found);
      break;
    }
  }
  if (found) return publish(job, *found, false);

  // The generic build: one per kernel (and argument layout) serves every
  // specialisation, so after the first it is linked or in the cache.
  runtime::Job generic = prepare(job.name, job.spec, Mode::generic);
  detail::EntryFn generic_entry = nullptr;
  Obtained how = Obtained::busy;
  try {
    how = obtain(generic, config_.lock_timeout, generic_entry);
  } catch (const CompileError& e) {
    // A text that compiles only with its values as constants (an array sized
    // by a parameter, a static_assert on one): its own build, as without
    // tiered start. The next miss of the kernel tries the generic build again.
    base::log().info("kernel '{}': its generic build does not compile, so tiered start waits for the specialised "
                     "build: {}", job.info->name, e.what());
    const Obtained own = obtain(job, config_.lock_timeout, entry);
    return publish(job, entry, own == Obtained::linked);
  }
  runtime::Job specialised = job;  // make_resolved() takes the values out of `job`
  std::unique_ptr<detail::ResolvedKernel> kernel = make_resolved(job, generic_entry, how == Obtained::linked);
  // Set before the kernel is published: a timed call reads them (kernel.cpp).
  kernel->generic_entry = generic_entry;
  kernel->generic_metrics_name = generic.metrics_name;
  const detail::ResolvedKernel* mine = kernel.get();
  runtime::MemoryKey memory_key{job.name, job.mode, job.spec.canonical(), job.spec.hash()};
  const detail::ResolvedKernel& kept = memory_.insert(std::move(memory_key), std::move(kernel));
  // Two threads that missed at once: the first's kernel stays, and its build.
  if (&kept == mine) tiered_.queue(std::move(specialised), const_cast<detail::ResolvedKernel&>(kept));
  return kept;
}

}  // namespace kiln
