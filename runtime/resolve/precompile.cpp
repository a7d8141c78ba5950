// Builds into the cache with nothing loaded: the obtain step that ends at the
// bytes, for a GPU kernel (gpu_kernel.cpp, gpu_precompile.cpp) and for a CPU
// target this host need not run (a login node warming the cache for compute
// nodes of another x86-64 level).
#include <exception>

#include "kiln/errors.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using runtime::Obtained;

// A hit is an entry that reads and verifies (in any tier); a miss goes the
// build path, which looks again under the key's build lock.
void Runtime::Impl::obtain_bytes(runtime::Resolution& resolution, bool keep) {
  for (std::size_t k = 0; k < resolution.keys(); ++k) {
    runtime::Job& job = resolution.first_job(k);
    runtime::Outcome& outcome = resolution.outcomes[k];
    const auto on_disk = [&]() -> std::optional<std::vector<char>> {
      std::optional<std::vector<char>> payload = cache_.read(job.key, job.metrics_name);
      if (payload) metrics_.count_disk_hit(job.metrics_name);
      return payload;
    };
    try {
      std::vector<char> binary;
      if (std::optional<std::vector<char>> found = on_disk()) {
        binary = std::move(*found);
        outcome.how = Obtained::loaded;
      } else {
        outcome.how = build_bytes(job, on_disk, binary);
      }
      if (keep) outcome.binary = std::move(binary);
    } catch (...) {
      outcome.error = std::current_exception();
    }
  }
}

Obtained Runtime::Impl::build_bytes(runtime::Job& job,
                                    const std::function<std::optional<std::vector<char>>()>& look_again,
                                    std::vector<char>& binary) {
  const auto found = [&] {
    std::optional<std::vector<char>> payload = look_again();
    if (payload) binary = std::move(*payload);
    return payload.has_value();
  };
  runtime::Built built = builder_.build(job, {.lock_wait = config_.lock_timeout}, found);
  if (built.how != runtime::Built::How::built) return Obtained::loaded;
  binary = std::move(built.binary);
  return Obtained::built;
}

std::string Runtime::precompile(std::string_view name, const Spec& spec, Mode mode) {
  runtime::Resolution one;
  one.add(impl_->prepare(name, spec, mode, nullptr, false), 0);
  runtime::run(one,
               {.obtain = [&](runtime::Resolution& r) { impl_->obtain_bytes(r, false); },
                .publish = [](runtime::Job&, const runtime::Outcome&, bool, std::size_t) {}},  // nothing loaded
               impl_->metrics());
  return one.jobs.front().key.hex();
}

}  // namespace kiln
