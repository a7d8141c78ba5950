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
  const jit::CompilerInfo info = compiler_info();
  if (!options_.cpu.empty()) return target().triple + " " + options_.cpu;
  return target().triple + " " + info.host_cpu + " " + info.host_features;
}

std::string CpuCompiler::identity() { return compiler_info().identity; }

jit::CompilerInfo CpuCompiler::compiler_info() {
  base::Result<jit::CompilerInfo> info = workers().info();
  if (!info) throw ToolchainError(toolchain_cause(info.error().message));
  return std::move(*info);
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
    const base::Result<std::string> actual = jit::compiler_module_fingerprint(module.path);
    if (!actual) return toolchain_cause("cannot identify the compiler: " + actual.error().message);
    if (*actual == fingerprint()) return {};
    // LLVM's libraries missing change the fingerprint too: a module that
    // does not load says so (the worker's dlopen message), before any talk
    // of another module.
    const base::Result<jit::CompileWorkers*> workers = jit::default_compile_workers();
    if (!workers) return toolchain_cause(workers.error().message);
    if (const base::Result<jit::CompilerInfo> info = (*workers)->info(); !info)
      return toolchain_cause(info.error().message);
    return "the compiler module " + module.path.string() + " (" + module.origin + ") is not the one this kiln " +
           "was built with (its fingerprint is " + *actual + ", kiln's " + fingerprint() + "): what it compiles " +
           "would be cached under another compiler's keys. Rebuild kiln against it, or point KILN_COMPILER_MODULE " +
           "at kiln's own.";
  }();
  if (!refusal.empty()) throw ToolchainError(refusal);
}

jit::CompileWorkers& CpuCompiler::workers() {
  const base::Result<jit::CompileWorkers*> workers = jit::default_compile_workers();
  if (!workers) throw ToolchainError(toolchain_cause(workers.error().message));
  return **workers;
}

jit::CompileLimits CpuCompiler::default_limits() {
  const Config defaults;
  return {.timeout = defaults.compile_timeout, .memory = defaults.compile_memory};
}

jit::CompileOutput CpuCompiler::compile(const std::string& source, const std::string& file_name,
                                        const jit::CompileLimits& limits, std::string_view opt_level) {
  check_module();
  // No CPU named: the worker compiles for the host as LLVM sees it, the host
  // whose identity (target()) is in the key; a level: its features, LLVM's.
  // The features sent are Config::gather's (options_key() holds them).
  jit::CompileOutput output = workers().compile(
      {.source = source,
       .file_name = file_name,
       .cpu = options_.cpu,
       .features = options_.features,
       .opt_level = opt_level.empty() ? options_.opt_level : "-" + std::string(opt_level),
       .fp_contract = options_.fp_contract},
      limits);
  if (output.failure == jit::CompileFailure::toolchain)
    throw ToolchainError(toolchain_cause(output.diagnostics));
  return output;
}

}  // namespace kiln::runtime
