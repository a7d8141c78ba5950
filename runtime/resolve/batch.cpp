// Runtime::kernels: many kernels at once, through the resolution loop
// (pipeline.hpp) with the build pool as its obtain step (build_pool.cpp).
#include <algorithm>

#include "runtime/resolve/bundles.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

std::vector<Kernel> Runtime::kernels(std::span<const KernelRequest> requests) {
  std::vector<Kernel> out(requests.size());
  // Memory hits need nothing more; the rest become jobs.
  for (std::size_t i = 0; i < requests.size(); ++i) {
    const KernelRequest& r = requests[i];
    if (const detail::ResolvedKernel* k = impl_->memory().find({r.name, r.mode, r.spec.canonical(), r.spec.hash()})) {
      k->memory_hits.add();
      out[i] = Kernel(&k->call);
    }
  }
  runtime::Resolution resolution = impl_->prepare_all(requests, out);
  // The batch's bundle, when one was written for its keys, maps them with one open (bundles.hpp).
  const std::optional<runtime::BundleEntries> bundled =
      runtime::load_bundle(impl_->cache(), impl_->metrics(), resolution.jobs);
  for (const auto& [key, entry] : bundled.value_or(runtime::BundleEntries{})) {
    runtime::Outcome& outcome = resolution.outcomes[resolution.index.at(key)];
    outcome.how = runtime::Obtained::loaded;
    outcome.entry = impl_->linked().add(key, entry);
  }
  const auto publish = [&](runtime::Job& job, const runtime::Outcome& outcome, bool repeat, std::size_t request) {
    out[request] = Kernel(&impl_->publish(job, outcome, repeat).call);
  };
  // Tiered start (Config::tiered): specialised misses get generic builds at once (tiered_start.cpp).
  const auto obtain = [&](runtime::Resolution& r) {
    impl_->config().tiered ? impl_->obtain_tiered_pooled(r) : impl_->obtain_pooled(r);
  };
  runtime::run(resolution, {.obtain = obtain, .publish = publish}, impl_->metrics());
  // Kernels loaded or built one by one: the next process's batch maps them from one bundle. Not
  // after a stand-in: its specialised entry is still being built; a later batch writes the bundle.
  const auto separately = [](const runtime::Outcome& o) {
    return o.how == runtime::Obtained::loaded || o.how == runtime::Obtained::built;
  };
  const auto stood_in = [](const runtime::Outcome& o) { return !o.stand_in.empty(); };
  if (!bundled && std::any_of(resolution.outcomes.begin(), resolution.outcomes.end(), separately) &&
      std::none_of(resolution.outcomes.begin(), resolution.outcomes.end(), stood_in))
    runtime::store_batch_bundle(impl_->cache(), resolution.jobs);
  return out;
}

}  // namespace kiln
