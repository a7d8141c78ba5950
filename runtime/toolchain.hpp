// The runtime's view of jit/: the host target, the compiler module's
// fingerprint, the (process-wide) object loader and the compiler, each set up
// on first use.
// A warm process asks only for the first three: the compiler module (clang)
// is loaded on the first cache miss, never before.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>
#include <mutex>
#include <string>

#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"
#include "jit/object_loader.hpp"

namespace kiln::runtime {

class Toolchain {
 public:
  static constexpr const char* kOptLevel = "-O3";

  const jit::HostTarget& target() const { return jit::host_target(); }
  std::string target_description() const;
  // Computed once per process (KILN_COMPILER_MODULE is read then). Throws
  // ToolchainError when the compiler module cannot be read (and retries next time).
  static const std::string& fingerprint();
  Toolchain() = default;
  Toolchain(const Toolchain&) = delete;
  Toolchain& operator=(const Toolchain&) = delete;
  // Unloads every object this toolchain linked.
  ~Toolchain();

  // Links an object into the process and returns the address of `symbol`; it
  // stays until this toolchain ends. All toolchains share one ORC session per
  // process: setting one up and tearing it down cost more than linking a
  // kernel. Throws ToolchainError when ORC cannot be set up, std::runtime_error
  // when the object does not link.
  void* link(std::span<const char> object, const std::string& symbol, const std::string& what);
  // Loads the compiler module on first use; throws ToolchainError when it cannot.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name);
  bool compiler_loaded() const { return compiler_ != nullptr; }

 private:
  static jit::ObjectLoader& loader();

  std::mutex mutex_;
  std::vector<std::uint64_t> linked_;  // ids in the shared loader, unloaded at the end
  std::unique_ptr<jit::CompilerModule> compiler_;
};

}  // namespace kiln::runtime
