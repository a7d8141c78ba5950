// NVRTC, CUDA's run-time compiler, loaded with dlopen: one kiln build runs on
// machines with and without CUDA, and says what is missing where it is
// absent. NVRTC needs no GPU and no driver, so compiling is tested everywhere.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "jit/rtc_library.hpp"

namespace kiln::jit {

// "sm_90" (a CUBIN for that GPU) or "compute_90" (PTX, which the driver
// compiles for any later GPU: the forward-compatible fallback).
struct CudaArch {
  int number = 0;  // 90 for sm_90
  bool virtual_arch = false;  // compute_XX: PTX
  std::string name() const;
};

// Parses "sm_NN" / "compute_NN"; fails (invalid) naming the text otherwise.
base::Result<CudaArch> parse_cuda_arch(std::string_view text);

class Nvrtc {
 public:
  // The process's NVRTC, loaded on first use (a failed load is tried again
  // on the next call). Fails naming every library tried and why each failed
  // when there is none. Thread-safe.
  static base::Result<const Nvrtc*> get();

  int major() const { return major_; }
  int minor() const { return minor_; }
  std::string version() const { return std::to_string(major_) + "." + std::to_string(minor_); }
  const std::string& library() const { return library_; }
  // For cache keys: the version and the library file's real path, whose name
  // carries the patch level (libnvrtc.so.13.0.88): an updated NVRTC changes it.
  const std::string& identity() const { return identity_; }
  // The options every kiln kernel is compiled with (besides the architecture).
  static std::span<const std::string> kernel_options();
  // The architecture numbers this NVRTC compiles for (75, 80, 86, 90, ...).
  const std::vector<int>& supported() const { return supported_; }

  // Fails (invalid), listing the supported ones, for an architecture this
  // NVRTC does not compile for.
  base::Result<void> check_arch(const CudaArch& arch) const;

  // Compiles `source` (diagnostics call it `file_name`) for `arch`, with the
  // extra `options`. A source that does not compile is ok == false with the
  // log. Fails (invalid) for an architecture this NVRTC does not support
  // (with the supported list), and (io) when NVRTC's own calls fail.
  base::Result<GpuCompileOutput> compile(std::string_view source, const std::string& file_name, const CudaArch& arch,
                                         std::span<const std::string> options = {}) const;

  struct Api;  // the function pointers (nvrtc.cpp)

 private:
  Nvrtc() = default;
  static base::Result<Nvrtc> load();
  std::shared_ptr<const Api> api_;
  std::string library_;
  std::string identity_;
  int major_ = 0, minor_ = 0;
  std::vector<int> supported_;
};

}  // namespace kiln::jit
