// A request's job: the kernel's declaration, the values bound, and the cache
// key, which stands for the translation unit without generating it (see
// codegen_identity()): only a miss generates source.
#include <chrono>

#include "runtime/kernels/cache_key.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

runtime::Job Runtime::Impl::prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu) {
  auto start = Clock::now();
  runtime::Job job;
  job.name = name;
  job.spec = spec;
  job.mode = mode;
  job.info = &registry_.get(name);
  job.bound = runtime::bind_spec(*job.info, spec);
  if (!job.specialised()) job.bound.strides.assign(job.bound.strides.size(), std::nullopt);
  job.metrics_name = job.specialised() ? job.info->name : job.info->name + " (generic)";
  job.specialise_ms = ms_since(start);

  start = Clock::now();
  runtime::KeyInputs inputs;
  inputs.kernel_source = job.info->source_digest;
  inputs.prelude = runtime::prelude_digest();
  inputs.specialisation = job.specialised() ? spec.canonical() : std::string_view();
  inputs.mode = job.specialised() ? "specialised" : "generic";
  if (gpu) {
    job.gpu = runtime::gpu_target(*gpu);
    job.metrics_name += " [" + job.gpu->backend + " " + job.gpu->arch + "]";
    inputs.backend = job.gpu->backend;
    inputs.triple = job.gpu->triple;
    inputs.cpu = job.gpu->arch;
    inputs.toolchain = job.gpu->toolchain;
    inputs.flags = job.gpu->flags;
  } else {
    const jit::HostTarget& target = compiler_.target();
    inputs.backend = "cpu";
    inputs.triple = target.triple;
    inputs.cpu = target.cpu;
    inputs.features = target.features;
    inputs.toolchain = runtime::CpuCompiler::fingerprint();
    inputs.flags = runtime::CpuCompiler::kOptLevel;
  }
  job.key = runtime::compute_key(inputs);
  job.symbol = "kiln_" + job.key.hex();
  metrics_.record(job.metrics_name, "key", ms_since(start));
  return job;
}

}  // namespace kiln
