// Tiered start (Config::tiered, docs/manual/tiered-start.md): a miss returns
// the generic build at once and the specialised build replaces it later. It
// hooks into the resolution loop twice: its obtain step (one kernel, or a
// batch on the build pool) lets the generic build stand in
// (Outcome::stand_in), and publishing a stand-in queues the specialised build.
#include <exception>
#include <optional>
#include <string>

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
  own.how = obtain(job, {.lock_wait = std::nullopt, .batch_slot = nullptr, .build = false}, own.entry);
  if (own.how != Obtained::busy) return own;

  // The generic build: one per kernel (and argument layout) serves every
  // specialisation, so after the first it is linked or in the cache.
  runtime::Outcome stand_in;
  runtime::Job generic = stand_in_job(job, stand_in);
  try {
    if (stand_in.entry == nullptr) stand_in.how = obtain(generic, {.lock_wait = config_.lock_timeout}, stand_in.entry);
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

runtime::Job Runtime::Impl::stand_in_job(const runtime::Job& job, runtime::Outcome& found,
                                         const runtime::Resolution* building) {
  runtime::Job generic = prepare(job.name, job.spec, Mode::generic);
  if (config_.tiered_opt_level == config_.opt_level) return generic;
  // At Config's level where it costs no compile: it runs faster than the
  // stand-in built for a short compile.
  if (building && building->index.contains(generic.key)) return generic;
  found.how = obtain(generic, {.lock_wait = std::nullopt, .batch_slot = nullptr, .build = false}, found.entry);
  if (found.how != Obtained::busy) return generic;
  return prepare(job.name, job.spec, Mode::generic, nullptr, true, config_.tiered_opt_level);
}

namespace {

// The compiler's message when `error` is a CompileError: a generic build that
// does not compile leaves the kernel to its specialised build.
std::optional<std::string> compile_error(const std::exception_ptr& error) {
  try {
    std::rethrow_exception(error);
  } catch (const CompileError& e) {
    return e.what();
  } catch (...) {
    return std::nullopt;
  }
}

}  // namespace

void Runtime::Impl::obtain_tiered_pooled(runtime::Resolution& resolution) {
  // Each key's own build where this process or a cache tier has it (a bundle
  // may have given some already); the rest go to the build pool: the generic
  // keys first, then each specialised key's generic build, to stand in (the
  // generic key's own when the batch builds it anyway).
  runtime::Resolution pooled;
  for (std::size_t k = 0; k < resolution.keys(); ++k)
    if (resolution.outcomes[k].entry == nullptr && !resolution.first_job(k).specialised())
      pooled.add(resolution.first_job(k), k);
  for (std::size_t k = 0; k < resolution.keys(); ++k) {
    runtime::Outcome& outcome = resolution.outcomes[k];
    runtime::Job& job = resolution.first_job(k);
    if (outcome.entry != nullptr || !job.specialised()) continue;
    try {
      outcome.how = obtain(job, {.lock_wait = std::nullopt, .batch_slot = nullptr, .build = false}, outcome.entry);
      if (outcome.how != Obtained::busy) continue;
      runtime::Job generic = stand_in_job(job, outcome, &pooled);
      if (outcome.entry != nullptr) {
        outcome.stand_in = generic.metrics_name;
      } else {
        pooled.add(std::move(generic), k);
      }
    } catch (...) {
      outcome.error = std::current_exception();
    }
  }
  obtain_pooled(pooled);
  // A generic build that does not compile: the specialised build, as kernel() does.
  runtime::Resolution own;
  for (std::size_t j = 0; j < pooled.jobs.size(); ++j) {
    const std::size_t k = pooled.request[j];
    const runtime::Outcome& got = pooled.outcomes[pooled.key_of[j]];
    runtime::Job& job = resolution.first_job(k);
    const std::optional<std::string> why = job.specialised() && got.error ? compile_error(got.error) : std::nullopt;
    if (why) {
      base::log().info("kernel '{}': its generic build does not compile, so tiered start waits for the specialised "
                       "build: {}", job.info->name, *why);
      own.add(job, k);
      continue;
    }
    resolution.outcomes[k] = got;
    if (job.specialised() && !got.error) resolution.outcomes[k].stand_in = pooled.jobs[j].metrics_name;
  }
  if (own.keys() == 0) return;
  obtain_pooled(own);
  for (std::size_t j = 0; j < own.jobs.size(); ++j) resolution.outcomes[own.request[j]] = own.outcomes[own.key_of[j]];
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
