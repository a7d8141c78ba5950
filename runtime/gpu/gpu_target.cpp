#include "runtime/gpu/gpu_target.hpp"

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "jit/hiprtc.hpp"
#include "jit/nvrtc.hpp"
#include "kiln/errors.hpp"

namespace kiln::runtime {

// The compiler, or a ToolchainError saying what is missing.
template <class Compiler>
const Compiler& compiler_or_throw() {
  const base::Result<const Compiler*> compiler = Compiler::get();
  if (!compiler) throw ToolchainError(compiler.error().message);
  return **compiler;
}
template const jit::Nvrtc& compiler_or_throw<jit::Nvrtc>();
template const jit::Hiprtc& compiler_or_throw<jit::Hiprtc>();

namespace {

std::string joined(std::span<const std::string> options) {
  std::string out;
  for (const std::string& o : options) out += o + " ";
  return out;
}

// What NVRTC or hipRTC made of a kernel: a source that does not compile is
// output with ok == false (the build path's CompileError). A failure of the
// library's own calls (creating the program, reading its binary) is the
// toolchain's; the architecture was checked when the job was made.
jit::GpuCompileOutput output_or_throw(base::Result<jit::GpuCompileOutput> output) {
  if (!output) throw ToolchainError(output.error().message);
  return std::move(*output);
}

// A compiler's kernel options, plus `no_contraction` when contraction is off.
std::vector<std::string> options_for(std::span<const std::string> kernel_options, std::string_view fp_contract,
                                     const char* no_contraction) {
  std::vector<std::string> options(kernel_options.begin(), kernel_options.end());
  if (fp_contract == "off") options.emplace_back(no_contraction);
  return options;
}

GpuJob cuda_job(const std::string& arch_text, std::string_view fp_contract) {
  const jit::Nvrtc& nvrtc = compiler_or_throw<jit::Nvrtc>();
  const base::Result<jit::CudaArch> parsed = jit::parse_cuda_arch(arch_text);
  if (!parsed) throw Error(parsed.error().message);
  const jit::CudaArch arch = *parsed;
  if (const base::Result<void> known = nvrtc.check_arch(arch); !known) throw Error(known.error().message);
  std::vector<std::string> options = options_for(jit::Nvrtc::kernel_options(), fp_contract, "--fmad=false");
  GpuJob job{.backend = "cuda", .triple = "nvptx64-nvidia-cuda", .arch = arch.name(),
             .toolchain = nvrtc.identity(), .flags = joined(options), .compile = {}};
  job.compile = [&nvrtc, arch, options](const std::string& source, const std::string& file_name) {
    return output_or_throw(nvrtc.compile(source, file_name, arch, options));
  };
  return job;
}

GpuJob hip_job(const std::string& arch, std::string_view fp_contract) {
  const jit::Hiprtc& hiprtc = compiler_or_throw<jit::Hiprtc>();
  if (const base::Result<void> known = jit::Hiprtc::check_arch(arch); !known) throw Error(known.error().message);
  std::vector<std::string> options = options_for(jit::Hiprtc::kernel_options(), fp_contract, "-ffp-contract=off");
  GpuJob job{.backend = "hip", .triple = "amdgcn-amd-amdhsa", .arch = arch, .toolchain = hiprtc.identity(),
             .flags = joined(options), .compile = {}};
  job.compile = [&hiprtc, arch, options](const std::string& source, const std::string& file_name) {
    return output_or_throw(hiprtc.compile(source, file_name, arch, options));
  };
  return job;
}

}  // namespace

GpuJob gpu_target(const GpuTarget& target, std::string_view fp_contract) {
  return target.backend == GpuBackend::hip ? hip_job(target.arch, fp_contract) : cuda_job(target.arch, fp_contract);
}

}  // namespace kiln::runtime
