// The runtime's view of jit/: the host target, the compiler module's
// fingerprint, the object loader and the compiler, each set up on first use.
// A warm process asks only for the first three: the compiler module (clang)
// is loaded on the first cache miss, never before.
#pragma once

#include <memory>
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
  // Throws ToolchainError when ORC cannot be set up.
  jit::ObjectLoader& loader();
  // Loads the compiler module on first use; throws ToolchainError when it cannot.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name);
  bool compiler_loaded() const { return compiler_ != nullptr; }

 private:
  std::mutex mutex_;
  std::unique_ptr<jit::ObjectLoader> loader_;
  std::unique_ptr<jit::CompilerModule> compiler_;
};

}  // namespace kiln::runtime
