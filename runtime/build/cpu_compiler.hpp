// The runtime's view of the CPU compiler (jit/compiler_module.hpp): the host
// target and the compiler's identity, both in every key, and the compiler
// itself. A warm process asks only for the first two: the compiler module
// (clang, LLVM, lld) is loaded on the first cache miss, never before.
#pragma once

#include <memory>
#include <mutex>
#include <string>

#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"

namespace kiln::runtime {

class CpuCompiler {
 public:
  static constexpr const char* kOptLevel = "-O3";

  const jit::HostTarget& target() const { return jit::host_target(); }
  // "x86_64-pc-linux-gnu sapphirerapids +avx,...": the CPU and features LLVM
  // compiles for. Loads the compiler module (only a miss asks).
  std::string target_description();
  // Computed once per process (KILN_COMPILER_MODULE is read then). Throws
  // ToolchainError when the compiler module cannot be read (and retries next time).
  static const std::string& fingerprint();
  // Loads the compiler module on first use; throws ToolchainError when it cannot.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name);

 private:
  jit::CompilerModule& module();

  std::mutex mutex_;
  std::unique_ptr<jit::CompilerModule> module_;
};

}  // namespace kiln::runtime
