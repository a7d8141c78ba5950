// The prepare step of the resolution loop (pipeline.hpp): a request's job,
// the kernel's declaration, the values bound, and the cache key, which stands
// for the translation unit without generating it (see codegen_identity()):
// only a miss generates source, and generated_source() when asked to show it.
#include <chrono>
#include <exception>
#include <string>

#include "runtime/compile/build_path.hpp"
#include "runtime/config/compile_options.hpp"
#include "runtime/kernels/cache_key.hpp"
#include "runtime/resolve/runtime_impl.hpp"

namespace kiln {

using Clock = std::chrono::steady_clock;
using runtime::ms_since;

runtime::Job Runtime::Impl::prepare(std::string_view name, const Spec& spec, Mode mode, const GpuTarget* gpu,
                                    bool to_load, std::string_view opt_level) {
  if (!gpu && to_load) compiler_.check_runs_here();  // before anything is compiled for nothing
  auto start = Clock::now();
  const auto requested = start;  // the timeline's: when the program asked
  runtime::Job job;
  job.name = name;
  job.spec = spec;
  job.mode = mode;
  job.info = &registry_.get(name);
  job.bound = lang::bind_spec(*job.info, spec);
  const std::string generic_layout = job.specialised() ? std::string() : lang::forget_values(job.bound);
  job.metrics_name = job.specialised() ? job.info->name : job.info->name + " (generic)";
  job.specialise_ms = ms_since(start);

  start = Clock::now();
  runtime::KeyInputs inputs;
  inputs.kernel_source = job.info->source_digest;
  inputs.prelude = runtime::prelude_digest();
  // Only what is compiled in: run-time values (Spec::run_time) share a binary.
  const std::string compiled = job.specialised() ? spec.compiled_canonical() : std::string();
  inputs.specialisation = job.specialised() ? std::string_view(compiled) : std::string_view(generic_layout);
  inputs.mode = job.specialised() ? "specialised" : "generic";
  std::string flags_at_level;  // outlives `inputs`' view of it
  if (gpu) {
    job.gpu = runtime::gpu_target(*gpu, config_.fp_contract);
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
    job.opt_level = opt_level;
    if (!opt_level.empty()) flags_at_level = compiler_.options_key(opt_level);  // tiered start's stand-ins
    inputs.flags = opt_level.empty() ? std::string_view(compiler_.options_key()) : std::string_view(flags_at_level);
  }
  job.key = runtime::compute_key(inputs);
  job.symbol = runtime::entry_symbol(job.key);
  metrics_.record(job.metrics_name, "key", ms_since(start));
  metrics_.note_requested(job.metrics_name, requested);
  return job;
}

runtime::Resolution Runtime::Impl::prepare_all(std::span<const KernelRequest> requests,
                                               std::span<const Kernel> out) {
  runtime::Resolution resolution;
  for (std::size_t i = 0; i < requests.size(); ++i) {
    if (out[i]) continue;
    try {
      resolution.add(prepare(requests[i].name, requests[i].spec, requests[i].mode), i);
    } catch (...) {
      if (!resolution.error) resolution.error = std::current_exception();
    }
  }
  return resolution;
}

namespace {

// The job's source with what decides how it is compiled: the CPU options the
// key holds and the target (a GPU's compiler flags and architecture).
GeneratedSource generated(const runtime::Job& job, const Config& config) {
  GeneratedSource out{job.key.hex(), job.info->file_name, runtime::job_source(job, config.check && !job.gpu), {}};
  if (job.gpu) {
    out.options = job.gpu->flags + " (" + job.gpu->backend + " " + job.gpu->arch + ")";
  } else {
    const runtime::CompileOptions options = runtime::compile_options(config);
    out.options = options.opt_level + " -ffp-contract=" + options.fp_contract + " -march=" + config.target_cpu +
                  (options.gather == "auto" ? "" : " gather=" + options.gather) + (options.check ? " (check mode)" : "");
  }
  return out;
}

}  // namespace

GeneratedSource Runtime::generated_source(std::string_view name, const Spec& spec, Mode mode) {
  return generated(impl_->prepare(name, spec, mode, nullptr, false), impl_->config());
}

GeneratedSource Runtime::generated_source(std::string_view name, const Spec& spec, const GpuTarget& target,
                                          Mode mode) {
  return generated(impl_->prepare(name, spec, mode, &target, false), impl_->config());
}

}  // namespace kiln
