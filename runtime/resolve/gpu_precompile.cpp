// GPU builds into the cache: the kernel as a __global__ entry, compiled by
// NVRTC (CUDA) or hipRTC (AMD) for one architecture and stored like a CPU
// object (the same resolution loop and build path: build lock, checksums,
// tiers and index). Nothing is loaded: compiling for a GPU needs neither the
// GPU nor its driver, so a login node can fill the cache for the compute nodes.
#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

std::string Runtime::precompile(std::string_view name, const Spec& spec, const GpuTarget& target, Mode mode) {
  runtime::Resolution one;
  one.add(impl_->prepare(name, spec, mode, &target), 0);
  runtime::run(one,
               {.obtain = [&](runtime::Resolution& r) { impl_->obtain_bytes(r, false); },
                .publish = [](runtime::Job&, const runtime::Outcome&, bool, std::size_t) {}},  // nothing loaded
               impl_->metrics());
  return one.jobs.front().key.hex();
}

}  // namespace kiln
