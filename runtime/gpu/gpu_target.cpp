#include "runtime/gpu/gpu_target.hpp"

#include <span>
#include <stdexcept>

#include "jit/hiprtc.hpp"
#include "jit/nvrtc.hpp"
#include "kiln/errors.hpp"

namespace kiln::runtime {

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
template const jit::Hiprtc& compiler_or_throw<jit::Hiprtc>();

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

}  // namespace kiln::runtime
