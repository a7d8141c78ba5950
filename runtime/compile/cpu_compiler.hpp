// The runtime's view of the CPU compiler: the host target and the compiler's
// identity, both in every key, and the compiler itself, which runs in worker
// processes (jit/compile_workers.hpp) so that a kernel text that crashes it,
// exhausts its memory or never finishes is a CompileError and the host goes
// on. A warm process asks only for the first two, which read no file: no
// worker is started (and clang, LLVM and lld are never read or loaded)
// before the first cache miss.
#pragma once

#include <string>

#include "jit/compile_workers.hpp"
#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"
#include "runtime/config/compile_options.hpp"

namespace kiln::runtime {

class CpuCompiler {
 public:
  // Throws Error for options Config cannot have (compile_options()).
  explicit CpuCompiler(const Config& config);
  // The options in the form the cache key takes them; at another level
  // ("O1") than Config::opt_level when one is given.
  const std::string& options_key() const { return options_.key; }
  std::string options_key(std::string_view opt_level) const { return options_.key_at(opt_level); }

  // What the key says kernels are compiled for: the host's identity, or for
  // a named target (Config::target_cpu: an x86-64 level or a CPU) the name
  // and the C library.
  const jit::HostTarget& target() const { return options_.cpu.empty() ? jit::host_target() : named_target_; }
  // Throws LoadError when this host cannot run what is compiled for the
  // target (a feature of the level it lacks): before anything is loaded.
  void check_runs_here() const;
  // "x86_64-pc-linux-gnu sapphirerapids +avx,...": the CPU and features LLVM
  // compiles for, as the compile worker reports them (starts one if none
  // has started yet: only a miss asks). Throws ToolchainError when none starts.
  std::string target_description();
  // "clang 19.1.7 (...); llvm 19.1.7; <clang's fixed flags>; lld 19.1.7; <its
  // flags>", as the compile worker reports it (starts one if none has
  // started). Throws ToolchainError when none starts.
  std::string identity();
  // The compiler's identity, taken when kiln was built: a warm process reads
  // neither the module nor LLVM's libraries (they need not even be there).
  static const std::string& fingerprint();
  // Compiles in a worker under `limits` (Config's compile_timeout and
  // compile_memory; the defaults here are Config's defaults). The output's
  // failure says how a compile that gave no binary ended; the build path
  // turns each into a CompileError. Throws ToolchainError when no worker
  // can be started, its message the cause alone (toolchain_cause()): the
  // build path names the kernel. `opt_level` ("O1"): another level than
  // Config::opt_level, as options_key(opt_level) says.
  jit::CompileOutput compile(const std::string& source, const std::string& file_name,
                             const jit::CompileLimits& limits = default_limits(), std::string_view opt_level = {});

  // Why the compiler cannot be used, from what failed (`what`: a worker's or
  // the module's message): the module absent, the module not loading (its
  // dependencies, LLVM's libraries, absent: dlopen's message), or another
  // module than kiln's. Each a sentence of its own, without the kernel.
  static std::string toolchain_cause(const std::string& what);

  static jit::CompileLimits default_limits();

 private:
  // The pool, and what its first worker reported; each throws ToolchainError
  // with toolchain_cause()'s text when it cannot be had.
  jit::CompileWorkers& workers();
  jit::CompilerInfo compiler_info();
  // Before the first compile: the module that would compile is there, loads,
  // and is the one whose fingerprint() the keys hold. Throws ToolchainError
  // with toolchain_cause()'s text otherwise.
  static void check_module();

  CompileOptions options_;
  jit::HostTarget named_target_;  // for a named target: {triple, name, "glibc <version>"}
  std::string refusal_;           // why kernels for the target cannot run here; empty when they can
};

}  // namespace kiln::runtime
