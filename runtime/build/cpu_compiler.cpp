#include "runtime/build/cpu_compiler.hpp"

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::runtime {

CpuCompiler::CpuCompiler(const Config& config) : options_(compile_options(config)) {}

std::string CpuCompiler::target_description() {
  jit::CompilerInfo info;
  try {
    info = workers().info();
  } catch (const std::exception& e) {
    throw ToolchainError(std::string("kiln: cannot start the compiler: ") + e.what());
  }
  return target().triple + " " + info.host_cpu + " " + info.host_features;
}

const std::string& CpuCompiler::fingerprint() {
  // Once per process: finding the module (dladdr, stat) and reading it cost
  // more than the rest of a warm resolution.
  static const std::string fingerprint = [] {
    try {
      return jit::compiler_module_fingerprint(jit::default_compiler_module_path());
    } catch (const std::exception& e) {
      throw ToolchainError(std::string("kiln: cannot identify the compiler: ") + e.what());
    }
  }();
  return fingerprint;
}

jit::CompileWorkers& CpuCompiler::workers() {
  try {
    return jit::default_compile_workers();
  } catch (const std::exception& e) {
    throw ToolchainError(std::string("kiln: cannot load the compiler: ") + e.what());
  }
}

jit::CompileLimits CpuCompiler::default_limits() {
  const Config defaults;
  return {.timeout = defaults.compile_timeout, .memory = defaults.compile_memory};
}

jit::CompileOutput CpuCompiler::compile(const std::string& source, const std::string& file_name,
                                        const jit::CompileLimits& limits) {
  // No CPU named: the worker compiles for the host as LLVM sees it, the host
  // whose identity (target()) is in the key.
  jit::CompileOutput output = workers().compile(
      {.source = source,
       .file_name = file_name,
       .cpu = {},
       .features = {},
       .opt_level = options_.opt_level,
       .fp_contract = options_.fp_contract},
      limits);
  if (output.failure == jit::CompileFailure::toolchain)
    throw ToolchainError("kiln: cannot run the compiler: " + output.diagnostics);
  return output;
}

}  // namespace kiln::runtime
