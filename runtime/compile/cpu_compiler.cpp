#include "runtime/compile/cpu_compiler.hpp"

#include <gnu/libc-version.h>

#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"

namespace kiln::runtime {

CpuCompiler::CpuCompiler(const Config& config) : options_(compile_options(config)) {
  if (options_.cpu.empty()) return;
  named_target_ = {.triple = jit::host_target().triple, .cpu = options_.cpu,
                   .features = std::string("glibc ") + gnu_get_libc_version()};
  std::string missing;
  for (const std::string& feature : jit::missing_features(options_.cpu)) missing += (missing.empty() ? "" : ", ") + feature;
  if (!missing.empty())
    refusal_ = "kiln: kernels are compiled for " + options_.cpu + " (Config::target_cpu, KILN_TARGET_CPU), and this " +
               "CPU lacks " + missing + ": they cannot run here (precompile() and kiln warm still compile them)";
}

void CpuCompiler::check_runs_here() const {
  if (!refusal_.empty()) throw LoadError(refusal_);
}

std::string CpuCompiler::target_description() {
  jit::CompilerInfo info;
  try {
    info = workers().info();
  } catch (const std::exception& e) {
    throw ToolchainError(toolchain_cause(e.what()));
  }
  if (!options_.cpu.empty()) return target().triple + " " + options_.cpu;
  return target().triple + " " + info.host_cpu + " " + info.host_features;
}

std::string CpuCompiler::identity() {
  try {
    return workers().info().identity;
  } catch (const std::exception& e) {
    throw ToolchainError(toolchain_cause(e.what()));
  }
}

const std::string& CpuCompiler::fingerprint() {
  static const std::string fingerprint = jit::built_compiler_fingerprint();
  return fingerprint;
}

std::string CpuCompiler::toolchain_cause(const std::string& what) { return jit::compiler_unavailable_cause(what); }

void CpuCompiler::check_module() {
  // Once per process, on the first miss: reading the module and LLVM's
  // libraries costs more than a warm resolution, which never gets here.
  static const std::string refusal = []() -> std::string {
    const jit::ModuleLocation module = jit::compiler_module_location();
    std::string actual;
    try {
      actual = jit::compiler_module_fingerprint(module.path);
    } catch (const std::exception& e) {
      return toolchain_cause(std::string("cannot identify the compiler: ") + e.what());
    }
    if (actual == fingerprint()) return {};
    // LLVM's libraries missing change the fingerprint too: a module that
    // does not load says so (the worker's dlopen message), before any talk
    // of another module.
    try {
      jit::default_compile_workers().info();
    } catch (const std::exception& e) {
      return toolchain_cause(e.what());
    }
    return "the compiler module " + module.path.string() + " (" + module.origin + ") is not the one this kiln " +
           "was built with (its fingerprint is " + actual + ", kiln's " + fingerprint() + "): what it compiles " +
           "would be cached under another compiler's keys. Rebuild kiln against it, or point KILN_COMPILER_MODULE " +
           "at kiln's own.";
  }();
  if (!refusal.empty()) throw ToolchainError(refusal);
}

jit::CompileWorkers& CpuCompiler::workers() {
  try {
    return jit::default_compile_workers();
  } catch (const std::exception& e) {
    throw ToolchainError(toolchain_cause(e.what()));
  }
}

jit::CompileLimits CpuCompiler::default_limits() {
  const Config defaults;
  return {.timeout = defaults.compile_timeout, .memory = defaults.compile_memory};
}

jit::CompileOutput CpuCompiler::compile(const std::string& source, const std::string& file_name,
                                        const jit::CompileLimits& limits) {
  check_module();
  // No CPU named: the worker compiles for the host as LLVM sees it, the host
  // whose identity (target()) is in the key; a level: its features, LLVM's.
  jit::CompileOutput output = workers().compile(
      {.source = source,
       .file_name = file_name,
       .cpu = options_.cpu,
       .features = {},
       .opt_level = options_.opt_level,
       .fp_contract = options_.fp_contract},
      limits);
  if (output.failure == jit::CompileFailure::toolchain)
    throw ToolchainError(toolchain_cause(output.diagnostics));
  return output;
}

}  // namespace kiln::runtime
