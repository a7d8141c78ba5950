// The runtime's view of jit/: the host target, the compiler module's
// fingerprint, the kernel loader and the compiler, each set up on first use.
// A warm process asks only for the first three: the compiler module (clang,
// LLVM, lld) is loaded on the first cache miss, never before.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <vector>
#include <mutex>
#include <string>

#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"
#include "jit/shared_object_loader.hpp"

namespace kiln::runtime {

class Toolchain {
 public:
  static constexpr const char* kOptLevel = "-O3";

  const jit::HostTarget& target() const { return jit::host_target(); }
  // "x86_64-pc-linux-gnu sapphirerapids +avx,...": the CPU and features LLVM
  // compiles for. Loads the compiler module (only a miss asks).
  std::string target_description();
  // Computed once per process (KILN_COMPILER_MODULE is read then). Throws
  // ToolchainError when the compiler module cannot be read (and retries next time).
  static const std::string& fingerprint();
  Toolchain() = default;
  Toolchain(const Toolchain&) = delete;
  Toolchain& operator=(const Toolchain&) = delete;
  // Unloads every kernel this toolchain loaded.
  ~Toolchain();

  // Loads a kernel binary (an ELF shared object) and returns the address of
  // `symbol`; it stays until this toolchain ends. Maps `file` when given (a
  // verified cache entry holding `binary`), else, or when mapping the file
  // fails (removed meanwhile, say), a private copy of `binary`. Throws
  // std::runtime_error when the binary does not load.
  void* load(std::span<const char> binary, const std::filesystem::path& file, const std::string& symbol,
             const std::string& what);
  // Loads the compiler module on first use; throws ToolchainError when it cannot.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name);
  bool compiler_loaded() const { return compiler_ != nullptr; }

 private:
  jit::CompilerModule& compiler();

  std::mutex mutex_;
  std::vector<void*> loaded_;  // dlopen handles, closed at the end
  std::unique_ptr<jit::CompilerModule> compiler_;
};

}  // namespace kiln::runtime
