// GPU builds into the cache: the kernel as a CUDA __global__ entry, compiled
// by NVRTC for one architecture and stored like a CPU object (same build
// lock, checksums, tiers and index). Nothing is loaded: compiling for a GPU
// needs neither the GPU nor its driver, so a login node can fill the cache
// for the compute nodes.
#include <algorithm>
#include <chrono>
#include <mutex>
#include <spdlog/spdlog.h>

#include "cache/entry_metadata.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/codegen.hpp"
#include "runtime/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

GpuJob gpu_target(const GpuTarget& target) {
  GpuJob job;
  try {
    job.nvrtc = &jit::Nvrtc::get();
  } catch (const std::exception& e) {
    throw ToolchainError(e.what());
  }
  try {
    job.arch = jit::parse_cuda_arch(target.arch);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  const auto& supported = job.nvrtc->supported();
  if (std::find(supported.begin(), supported.end(), job.arch.number) == supported.end()) {
    std::string list;
    for (int a : supported) {
      list += ' ';
      list += std::to_string(a);
    }
    throw Error("kiln: NVRTC " + job.nvrtc->version() + " cannot compile for " + job.arch.name() + "; it supports" +
                list);
  }
  job.arch_name = job.arch.name();
  return job;
}

// A hit is an entry that reads and verifies (in any tier); a miss compiles
// under the key's build lock and stores.
bool Runtime::Impl::precompile(Job& job) {
  const auto on_disk = [&] {
    const auto start = Clock::now();
    bool found = false;
    for (const cache::DiskStore& tier : read_only_tiers) found = found || tier.get(job.key).payload.has_value();
    found = found || (store && store->get(job.key).payload.has_value());
    metrics.record(job.metrics_name, "disk_lookup", ms_since(start));
    return found;
  };
  if (on_disk()) {
    metrics.count_disk_hit(job.metrics_name);
    return true;
  }
  std::optional<cache::BuildLock> lock;
  if (store) {
    const auto start = Clock::now();
    lock.emplace(cache::BuildLock::acquire(store->lock_path(job.key), config.lock_timeout));
    metrics.record(job.metrics_name, "lock_wait", ms_since(start));
    if (lock->held() && on_disk()) {
      metrics.count_disk_hit(job.metrics_name);
      return true;
    }
  }
  auto start = Clock::now();
  const std::string source = runtime::generate_gpu_source(*job.info, job.bound, job.specialised(),
                                                          kernels_src::prelude().text, job.symbol);
  job.specialise_ms += ms_since(start);
  const jit::GpuCompileOutput out =
      job.gpu->nvrtc->compile(source, job.info->file_name, job.gpu->arch, jit::Nvrtc::kernel_options());
  metrics.record(job.metrics_name, "compile", out.compile_ms);
  if (!out.ok) throw CompileError(job.info->name, out.log);
  metrics.count_compile(job.metrics_name);
  if (store) {
    const cache::IndexRecord record{job.key,       job.metrics_name, job.specialised() ? job.spec.to_json() : "{}",
                                    "cuda",        job.gpu->arch_name, out.binary.size(),
                                    out.compile_ms};
    start = Clock::now();
    const cache::PutResult put = store->put(job.key, out.binary, cache::encode_metadata(record));
    metrics.record(job.metrics_name, "store", ms_since(start));
    if (!put.ok) {
      warn_once(cache_warning_given, "cannot store in the kernel cache (" + put.error + ")");
    } else {
      {
        std::lock_guard guard(mutex);
        stored_entries = true;
      }
      if (cache::Index* idx = open_index()) idx->record(record);
    }
  }
  return false;
}

std::string Runtime::precompile(std::string_view name, const Spec& spec, const GpuTarget& target, Mode mode) {
  Job job = impl_->prepare(name, spec, mode, &target);
  impl_->precompile(job);
  impl_->metrics.record(job.metrics_name, "specialise", job.specialise_ms);
  return job.key.hex();
}

}  // namespace kiln
