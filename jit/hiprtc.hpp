// hipRTC, HIP's run-time compiler for AMD GPUs, loaded with dlopen from
// libamdhip64.so (ROCm; Debian 12 ships 5.2.3). Like NVRTC it needs no GPU.
// It compiles only for an explicit --offload-arch, and this ROCm aborts the
// whole process inside comgr for some targets (gfx940, gfx942, gfx1100), so
// kiln passes only architectures checked to work and refuses the others.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "jit/rtc_library.hpp"

namespace kiln::jit {

class Hiprtc {
 public:
  // The process's hipRTC, loaded on first use (a failed load is tried again
  // on the next call). Fails naming every library tried and why each failed
  // when there is none. Thread-safe.
  static base::Result<const Hiprtc*> get();

  const std::string& library() const { return library_; }
  // For cache keys: hipRTC's version and the library's real path, whose name
  // carries ROCm's version (libamdhip64.so.5.2.21153).
  const std::string& identity() const { return identity_; }
  // The architectures kiln lets this hipRTC compile for ("gfx90a", ...).
  static std::span<const std::string_view> supported();
  static std::span<const std::string> kernel_options();
  // Fails (invalid), with the list, for an architecture outside supported().
  static base::Result<void> check_arch(std::string_view arch);

  // Compiles for `arch` ("gfx90a"). A source that does not compile is
  // ok == false with the log. Fails (invalid) for an architecture outside
  // supported(), with the list, and (io) when hipRTC's own calls fail.
  base::Result<GpuCompileOutput> compile(std::string_view source, const std::string& file_name,
                                         std::string_view arch, std::span<const std::string> options = {}) const;

  struct Api;

 private:
  Hiprtc() = default;
  static base::Result<Hiprtc> load();
  std::shared_ptr<const Api> api_;
  std::string library_;
  std::string identity_;
};

}  // namespace kiln::jit
