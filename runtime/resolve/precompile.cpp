// Builds into the cache with nothing loaded: for a GPU (gpu/gpu_precompile.cpp
// holds that overload), and for a CPU target this host need not run (a login
// node warming the cache for compute nodes of another x86-64 level).
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

std::string Runtime::precompile(std::string_view name, const Spec& spec, Mode mode) {
  runtime::Job job = impl_->prepare(name, spec, mode, nullptr, false);
  (void)impl_->precompile(job);
  impl_->metrics().record(job.metrics_name, "specialise", job.specialise_ms);
  return job.key.hex();
}

}  // namespace kiln
