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
#include "runtime/mapped_entries.hpp"

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
  // Unloads the private copies this toolchain loaded.
  ~Toolchain();

  // Loads a kernel binary (an ELF shared object) and returns the address of
  // `symbol`. Maps `file` when given (a verified cache entry holding
  // `binary`; it stays mapped until the process ends, mapped_entries.hpp).
  // Else, or when that file cannot be mapped, loads a private copy of
  // `binary` (jit::load_shared_object_bytes), unloaded when this toolchain
  // ends: its name is never used again. Throws std::runtime_error when the
  // binary does not load.
  void* load(std::span<const char> binary, const EntryFile* file, const std::string& symbol, const std::string& what);
  // Loads the compiler module on first use; throws ToolchainError when it cannot.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name);

 private:
  jit::CompilerModule& compiler();

  std::mutex mutex_;
  std::vector<void*> private_copies_;  // dlopen handles, closed at the end
  std::unique_ptr<jit::CompilerModule> compiler_;
};

}  // namespace kiln::runtime
