#include "runtime/toolchain.hpp"

#include "kiln/errors.hpp"

namespace kiln::runtime {

std::string Toolchain::target_description() const {
  const jit::HostTarget& t = target();
  return t.triple + " " + t.cpu + " " + t.features;
}

const std::string& Toolchain::fingerprint() {
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

jit::ObjectLoader& Toolchain::loader() {
  std::lock_guard lock(mutex_);
  if (!loader_) {
    try {
      loader_ = jit::ObjectLoader::create();
    } catch (const std::exception& e) {
      throw ToolchainError(std::string("kiln: cannot set up the object loader: ") + e.what());
    }
  }
  return *loader_;
}

jit::CompileOutput Toolchain::compile(const std::string& source, const std::string& file_name) {
  {
    std::lock_guard lock(mutex_);
    if (!compiler_) {
      try {
        compiler_ = jit::CompilerModule::load(jit::default_compiler_module_path(), jit::clang_resource_dir());
      } catch (const std::exception& e) {
        throw ToolchainError(std::string("kiln: cannot load the compiler: ") + e.what());
      }
    }
  }
  const jit::HostTarget& t = target();
  return compiler_->compile({.source = source, .file_name = file_name, .cpu = t.cpu, .features = t.features,
                             .opt_level = kOptLevel});
}

}  // namespace kiln::runtime
