// libkiln's side of the compiler module: finds libkiln_clang.so, dlopens it
// RTLD_LOCAL on first use and turns its C table into C++ calls.
#pragma once

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "base/failure.hpp"

// The module's C table (jit/compiler_abi.h), declared at global scope: a bare
// `struct kiln_compiler` inside the namespace would declare another type.
struct kiln_compiler;

namespace kiln::jit {

// Why a compile gave no binary, beyond the source's own errors. Only a compile
// in a worker process (jit/compile_workers.hpp) can end the last four ways.
enum class CompileFailure {
  none,           // compiled, or the source does not compile: diagnostics say why
  crashed,        // the compiler died of a signal or exited mid-compile
  out_of_memory,  // it exceeded its memory limit
  timed_out,      // it ran past its time limit and was stopped
  toolchain,      // no worker could be started, or it broke the protocol: not the kernel's doing
};

struct CompileOutput {
  bool ok = false;
  std::vector<char> binary;  // ELF shared object on success (jit/shared_object_loader loads it)
  std::string diagnostics;   // clang's messages (warnings too), or why it failed
  CompileFailure failure = CompileFailure::none;
};

struct CompileInput {
  std::string source;
  std::string file_name;
  std::string cpu;       // empty: the host's CPU and features (-march=native) ...
  std::string features;  // ... and then these are ignored
  std::string opt_level = "-O3";
  std::string fp_contract = "on";  // -ffp-contract: on (within an expression), off, fast
};

class CompilerModule {
 public:
  // Loads the module and sets it up. Fails naming the path and dlerror()/the
  // module's message when it cannot.
  static base::Result<std::unique_ptr<CompilerModule>> load(const std::filesystem::path& module_path,
                                                            const std::filesystem::path& resource_dir);
  ~CompilerModule();

  std::string identity() const;
  // The host CPU and features as LLVM sees them: what an empty CompileInput::cpu compiles for.
  std::string host_cpu() const;
  std::string host_features() const;
  CompileOutput compile(const CompileInput& input) const;  // thread-safe

 private:
  CompilerModule() = default;
  void* handle_ = nullptr;
  const ::kiln_compiler* table_ = nullptr;
};

// Where libkiln_clang.so is: $KILN_COMPILER_MODULE if set, else beside the
// binary that holds libkiln (<libdir>/kiln/libkiln_clang.so); only a libkiln
// inside kiln's build folder, with no module beside it, uses the build
// folder's. An installed libkiln whose module is absent names its own
// (absent) path, never the build folder's.
struct ModuleLocation {
  std::filesystem::path path;
  std::string origin;  // "from KILN_COMPILER_MODULE", "beside <libkiln>", "the build folder's": for messages
};
ModuleLocation compiler_module_location();
std::filesystem::path default_compiler_module_path();  // compiler_module_location().path

// Why the compiler cannot be used, from `what` (a message of load() or of a
// compile worker that did not start): the module absent (naming where it was
// looked for), the module not loading (its dependencies, LLVM's libraries,
// absent: dlopen's message), else `what` itself.
std::string compiler_unavailable_cause(const std::string& what);

// The compiler's identity without loading it: the LLVM version kiln was built
// against, the module's GNU build ID and those of the shared libclang-cpp and
// libLLVM it links (an XXH3 of the bytes for a file without one), so a rebuilt
// module or an updated LLVM changes every key. Reads a few pages of each file,
// not the files (an XXH3 of the whole module cost ~0.5 ms per warm process);
// cached per process (keyed by path, size and modification time). Fails
// naming the path when the module cannot be read.
base::Result<std::string> compiler_module_fingerprint(const std::filesystem::path& module_path);

// compiler_module_fingerprint() of the module this kiln was built with,
// taken at build time (jit/fingerprint_main.cpp): no file is read.
const char* built_compiler_fingerprint();

// clang's resource directory: $KILN_CLANG_RESOURCE_DIR if set, else the one
// baked in at build time. Fails (not_found) naming the path when
// <dir>/include/stddef.h is missing (Debian's clang silently falls back otherwise).
base::Result<std::filesystem::path> clang_resource_dir();

}  // namespace kiln::jit
