// GPU builds into the cache: the kernel as a __global__ entry, compiled by
// NVRTC (CUDA) or hipRTC (AMD) for one architecture and stored like a CPU object (same build
// lock, checksums, tiers and index). Nothing is loaded: compiling for a GPU
// needs neither the GPU nor its driver, so a login node can fill the cache
// for the compute nodes.
#include <algorithm>
#include <chrono>
#include <mutex>

#include "cache/entry_metadata.hpp"
#include "cache/index_journal.hpp"
#include "jit/hiprtc.hpp"
#include "jit/nvrtc.hpp"
#include "kernels_src/embedded_sources.hpp"
#include "kiln/errors.hpp"
#include "runtime/codegen.hpp"
#include "runtime/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

// The compiler, or a ToolchainError saying what is missing.
template <class Compiler>
const Compiler& compiler_or_throw() {
  try {
    return Compiler::get();
  } catch (const std::exception& e) {
    throw ToolchainError(e.what());
  }
}
template const jit::Nvrtc& compiler_or_throw<jit::Nvrtc>();

namespace {

std::string joined(std::span<const std::string> options) {
  std::string out;
  for (const std::string& o : options) out += o + " ";
  return out;
}


GpuJob cuda_job(const std::string& arch_text) {
  const jit::Nvrtc& nvrtc = compiler_or_throw<jit::Nvrtc>();
  jit::CudaArch arch;
  try {
    arch = jit::parse_cuda_arch(arch_text);
    nvrtc.check_arch(arch);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  GpuJob job{.backend = "cuda", .triple = "nvptx64-nvidia-cuda", .arch = arch.name(),
             .toolchain = nvrtc.identity(), .flags = joined(jit::Nvrtc::kernel_options()), .compile = {}};
  job.compile = [&nvrtc, arch](const std::string& source, const std::string& file_name) {
    return nvrtc.compile(source, file_name, arch, jit::Nvrtc::kernel_options());
  };
  return job;
}

GpuJob hip_job(const std::string& arch) {
  const jit::Hiprtc& hiprtc = compiler_or_throw<jit::Hiprtc>();
  try {
    jit::Hiprtc::check_arch(arch);
  } catch (const std::invalid_argument& e) {
    throw Error(e.what());
  }
  GpuJob job{.backend = "hip", .triple = "amdgcn-amd-amdhsa", .arch = arch, .toolchain = hiprtc.identity(),
             .flags = joined(jit::Hiprtc::kernel_options()), .compile = {}};
  job.compile = [&hiprtc, arch](const std::string& source, const std::string& file_name) {
    return hiprtc.compile(source, file_name, arch, jit::Hiprtc::kernel_options());
  };
  return job;
}

}  // namespace

GpuJob gpu_target(const GpuTarget& target) {
  return target.backend == GpuBackend::hip ? hip_job(target.arch) : cuda_job(target.arch);
}

// A hit is an entry that reads and verifies (in any tier); a miss compiles
// under the key's build lock and stores.
bool Runtime::Impl::precompile(Job& job, std::vector<char>* binary) {
  const auto on_disk = [&] {
    std::optional<std::vector<char>> payload = read_entry(job);
    if (payload && binary) *binary = std::move(*payload);
    return payload.has_value();
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
  const jit::GpuCompileOutput out = job.gpu->compile(source, job.info->file_name);
  metrics.record(job.metrics_name, "compile", out.compile_ms);
  if (!out.ok) throw CompileError(job.info->name, out.log);
  metrics.count_compile(job.metrics_name);
  if (store) {
    const cache::IndexRecord record{job.key,          job.metrics_name, job.spec.to_json(),
                                    job.gpu->backend, job.gpu->arch,    out.binary.size(),
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
      if (const auto path = journal()) after_append(cache::append_stored(*path, record));
    }
  }
  if (binary) *binary = out.binary;
  return false;
}

std::string Runtime::precompile(std::string_view name, const Spec& spec, const GpuTarget& target, Mode mode) {
  Job job = impl_->prepare(name, spec, mode, &target);
  impl_->precompile(job);
  impl_->metrics.record(job.metrics_name, "specialise", job.specialise_ms);
  return job.key.hex();
}

}  // namespace kiln
