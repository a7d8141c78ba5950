// Runtime::kernels: many kernels at once, through the resolution loop
// (pipeline.hpp) with the build pool as its obtain step (build_pool.cpp).
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
  const auto publish = [&](runtime::Job& job, const runtime::Outcome& outcome, bool repeat, std::size_t request) {
    out[request] = Kernel(&impl_->publish(job, outcome, repeat).call);
  };
  runtime::run(resolution, {.obtain = [&](runtime::Resolution& r) { impl_->obtain_pooled(r); }, .publish = publish},
               impl_->metrics());
  return out;
}

}  // namespace kiln
