// Inside libkiln_clang.so: clang's driver and front end, run in process. With
// prelude_pch.cpp, the only files that include clang's headers (one such file
// takes ~18 s to build).
#pragma once

#include <cstddef>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class MCSubtargetInfo;
}

namespace kiln::jit::compiler {

struct Request {
  std::string_view source;
  std::string_view file_name;  // the name diagnostics give the main file
  std::string_view cpu;        // -target-cpu; empty: the host's (what -march=native means)
  // "+avx2,-avx512f": one -target-feature each, after the CPU's (with an
  // empty cpu, after the host's): the runtime sends only "+prefer-no-gather"
  // or "-prefer-no-gather" (KILN_GATHER), or nothing.
  std::string_view features;
  std::string_view opt_level;  // "-O0" ... "-O3", "-Os", "-Oz"
  std::string_view fp_contract = "on";  // -ffp-contract: "on", "off", "fast"
  // A source that starts with kiln's prelude (prelude_pch.hpp) compiles it
  // from the process's precompiled copy; false: parsed again, as a test's or
  // a benchmark's baseline.
  bool reuse_prelude = true;
};

struct Outcome {
  bool ok = false;
  std::vector<char> object;  // ELF relocatable object when ok
  std::string diagnostics;   // clang's messages, or why it failed
  bool used_prelude = false; // the prelude came from its precompiled copy
};

class PreludeCache;
struct PrecompiledPrelude;

class Frontend {
 public:
  // Runs clang's driver once: it turns the fixed flags into cc1 arguments (system
  // include paths, PIC, ...). Returns null and sets `error` when it cannot.
  static std::unique_ptr<Frontend> create(const std::string& resource_dir, std::string& error);

  // Thread-safe: each call has its own CompilerInstance and LLVMContext and
  // only reads the shared cc1 arguments; the precompiled preludes are shared
  // under their own lock.
  Outcome compile(const Request& request) const;

  // The driver flags every compile uses (they belong in the compiler's identity).
  static std::string flags();

  const std::string& resource_dir() const { return resource_dir_; }
  // The host as LLVM sees it (computed once, at create()).
  const std::string& host_cpu() const { return host_cpu_; }
  const std::string& host_features() const { return host_features_; }

  // Whether a compile for `cpu` (an LLVM CPU name) reads a neighbour per lane
  // with a gather when its request names neither sign of prefer-no-gather:
  // when LLVM's tuning for the CPU has fast-gather (X86's TuningFastGather:
  // Intel from Skylake on and x86-64-v4, no AMD Zen). A CPU LLVM does not
  // know: no.
  bool prefer_gathers(std::string_view cpu) const;

  // How many precompiled preludes this front end has built (or tried to).
  std::size_t prelude_builds() const;

  ~Frontend();

 private:
  Frontend();
  std::vector<const char*> arguments(const Request& request, const std::string& file_name,
                                     std::deque<std::string>& owned, std::string& why) const;
  Outcome run(const std::vector<const char*>& args, std::string_view source, const std::string& file_name,
              const PrecompiledPrelude* prelude) const;
  bool load_known_features(std::string& error);
  bool fast_gather(std::string_view cpu) const;

  std::string resource_dir_;
  std::string host_cpu_;
  std::string host_features_;  // sorted by name, comma separated
  std::set<std::string, std::less<>> known_features_;  // names without the sign
  std::unique_ptr<llvm::MCSubtargetInfo> subtargets_;   // the triple's, no CPU: which CPUs LLVM knows
  bool host_prefers_gathers_ = false;
  std::vector<std::string> cc1_args_;  // without -cc1, -target-cpu/-tune-cpu/-target-feature, -o
  std::size_t opt_index_ = 0;          // cc1_args_[opt_index_] is the -O flag
  std::vector<std::size_t> file_name_indices_;  // -main-file-name's value and the input
  std::unique_ptr<PreludeCache> preludes_;      // thread-safe on its own
};

}  // namespace kiln::jit::compiler
