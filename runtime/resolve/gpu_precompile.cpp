// GPU builds into the cache: the kernel as a __global__ entry, compiled by
// NVRTC (CUDA) or hipRTC (AMD) for one architecture and stored like a CPU
// object (the same build path: build lock, checksums, tiers and index).
// Nothing is loaded: compiling for a GPU needs neither the GPU nor its
// driver, so a login node can fill the cache for the compute nodes.
#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

std::string Runtime::precompile(std::string_view name, const Spec& spec, const GpuTarget& target, Mode mode) {
  runtime::Job job = impl_->prepare(name, spec, mode, &target);
  (void)impl_->precompile(job);
  impl_->metrics().record(job.metrics_name, "specialise", job.specialise_ms);
  return job.key.hex();
}

}  // namespace kiln
