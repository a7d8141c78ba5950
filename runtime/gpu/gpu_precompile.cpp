// GPU builds into the cache: the kernel as a __global__ entry, compiled by
// NVRTC (CUDA) or hipRTC (AMD) for one architecture and stored like a CPU
// object (the same build path: build lock, checksums, tiers and index).
// Nothing is loaded: compiling for a GPU needs neither the GPU nor its
// driver, so a login node can fill the cache for the compute nodes.
#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

// A hit is an entry that reads and verifies (in any tier); a miss goes the
// build path, which looks again under the key's build lock.
bool Runtime::Impl::precompile(runtime::Job& job, std::vector<char>* binary) {
  const auto on_disk = [&] {
    std::optional<std::vector<char>> payload = cache_.read(job.key, job.metrics_name);
    if (!payload) return false;
    if (binary) *binary = std::move(*payload);
    metrics_.count_disk_hit(job.metrics_name);
    return true;
  };
  if (on_disk()) return true;
  runtime::Built built = builder_.build(job, {.lock_wait = config_.lock_timeout}, on_disk);
  if (built.how != runtime::Built::How::built) return true;
  if (binary) *binary = std::move(built.binary);
  return false;
}

std::string Runtime::precompile(std::string_view name, const Spec& spec, const GpuTarget& target, Mode mode) {
  runtime::Job job = impl_->prepare(name, spec, mode, &target);
  (void)impl_->precompile(job);
  impl_->metrics().record(job.metrics_name, "specialise", job.specialise_ms);
  return job.key.hex();
}

}  // namespace kiln
