// A GPU build's compiler and architecture: NVRTC for CUDA, hipRTC for AMD.
// A new GPU backend adds its compiler in jit/ and its target here.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "jit/rtc_library.hpp"
#include "kiln/runtime.hpp"

namespace kiln::runtime {

struct GpuJob {
  std::string backend;    // "cuda" | "hip"
  std::string triple;     // nvptx64-nvidia-cuda | amdgcn-amd-amdhsa
  std::string arch;       // "sm_90", "compute_90", "gfx90a"
  std::string toolchain;  // the compiler's identity: version and library file
  std::string flags;      // its options
  // ok == false with the log for a source that does not compile; throws
  // ToolchainError when the compiler's own calls fail.
  std::function<jit::GpuCompileOutput(const std::string& source, const std::string& file_name)> compile;
};

// Checks the target: throws ToolchainError when its compiler (NVRTC,
// hipRTC) is missing, Error for an architecture it does not know or support.
// `fp_contract` (Config::fp_contract): "off" turns the compiler's
// multiply-add contraction off (NVRTC and hipRTC contract by default), so
// that a GPU build rounds as the CPU's with KILN_FP_CONTRACT=off; its flags,
// and so its key, say so. "on" and "fast" leave the compiler's default.
GpuJob gpu_target(const GpuTarget& target, std::string_view fp_contract = "on");

// The GPU compiler (jit::Nvrtc, jit::Hiprtc), or a ToolchainError saying what is missing.
template <class Compiler>
const Compiler& compiler_or_throw();

}  // namespace kiln::runtime
