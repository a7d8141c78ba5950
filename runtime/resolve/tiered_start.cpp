// Tiered start (Config::tiered, docs/manual/tiered-start.md): a miss returns
// the generic build at once and the specialised build replaces it later. It
// hooks into the resolution loop twice: its obtain step lets the generic
// build stand in (Outcome::stand_in), and publishing a stand-in queues the
// specialised build.
#include <exception>

#include "base/log.hpp"
#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using runtime::Obtained;

void Runtime::Impl::obtain_tiered(runtime::Resolution& resolution) {
  for (std::size_t k = 0; k < resolution.keys(); ++k) {
    try {
      resolution.outcomes[k] = tiered_outcome(resolution.first_job(k));
    } catch (...) {
      resolution.outcomes[k].error = std::current_exception();
    }
  }
}

runtime::Outcome Runtime::Impl::tiered_outcome(runtime::Job& job) {
  // Its own build when this process has it or a cache tier holds it: nothing
  // to wait for, so nothing to tier. A key another thread is building is left
  // to it (the queued build then waits for it, not this call).
  runtime::Outcome own;
  own.how = obtain(job, {.build = false}, own.entry);
  if (own.how != Obtained::busy) return own;

  // The generic build: one per kernel (and argument layout) serves every
  // specialisation, so after the first it is linked or in the cache.
  runtime::Job generic = prepare(job.name, job.spec, Mode::generic);
  runtime::Outcome stand_in;
  try {
    stand_in.how = obtain(generic, {.lock_wait = config_.lock_timeout}, stand_in.entry);
  } catch (const CompileError& e) {
    // A text that compiles only with its values as constants (an array sized
    // by a parameter, a static_assert on one): its own build, as without
    // tiered start. The next miss of the kernel tries the generic build again.
    base::log().info("kernel '{}': its generic build does not compile, so tiered start waits for the specialised "
                     "build: {}", job.info->name, e.what());
    own.how = obtain(job, {.lock_wait = config_.lock_timeout}, own.entry);
    return own;
  }
  stand_in.stand_in = generic.metrics_name;
  return stand_in;
}

const detail::ResolvedKernel& Runtime::Impl::publish_stand_in(runtime::Job& job, const runtime::Outcome& outcome,
                                                              bool from_memory) {
  runtime::Job specialised = job;  // make_resolved() takes the values out of `job`
  std::unique_ptr<detail::ResolvedKernel> kernel = make_resolved(job, outcome.entry, from_memory);
  // Set before the kernel is published: a timed call reads them (kernel.cpp).
  kernel->generic_entry = outcome.entry;
  kernel->generic_metrics_name = outcome.stand_in;
  const detail::ResolvedKernel* mine = kernel.get();
  runtime::MemoryKey memory_key{job.name, job.mode, job.spec.canonical(), job.spec.hash()};
  const detail::ResolvedKernel& kept = memory_.insert(std::move(memory_key), std::move(kernel));
  // Two threads that missed at once: the first's kernel stays, and its build.
  if (&kept == mine) tiered_.queue(std::move(specialised), const_cast<detail::ResolvedKernel&>(kept));
  return kept;
}

}  // namespace kiln
