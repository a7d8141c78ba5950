#include "runtime/build/cpu_compiler.hpp"

#include "kiln/errors.hpp"

namespace kiln::runtime {

std::string CpuCompiler::target_description() {
  jit::CompilerModule& m = module();
  return target().triple + " " + m.host_cpu() + " " + m.host_features();
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

jit::CompilerModule& CpuCompiler::module() {
  std::lock_guard lock(mutex_);
  if (!module_) {
    try {
      module_ = jit::CompilerModule::load(jit::default_compiler_module_path(), jit::clang_resource_dir());
    } catch (const std::exception& e) {
      throw ToolchainError(std::string("kiln: cannot load the compiler: ") + e.what());
    }
  }
  return *module_;
}

jit::CompileOutput CpuCompiler::compile(const std::string& source, const std::string& file_name) {
  // No CPU named: the module compiles for the host as LLVM sees it, the host
  // whose identity (target()) is in the key.
  return module().compile({.source = source, .file_name = file_name, .cpu = {}, .features = {}, .opt_level = kOptLevel});
}

}  // namespace kiln::runtime
