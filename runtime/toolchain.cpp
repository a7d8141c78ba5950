#include "runtime/toolchain.hpp"

#include "kiln/errors.hpp"

namespace kiln::runtime {

std::string Toolchain::target_description() {
  jit::CompilerModule& module = compiler();
  return target().triple + " " + module.host_cpu() + " " + module.host_features();
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

Toolchain::~Toolchain() {
  for (void* handle : private_copies_) jit::unload_shared_object(handle);
}

void* Toolchain::load(std::span<const char> binary, const EntryFile* file, const std::string& symbol,
                      const std::string& what) {
  if (file != nullptr) {
    if (void* address = map_entry(*file, binary, symbol, what)) return address;
  }
  const jit::LoadedObject loaded = jit::load_shared_object_bytes(binary, symbol, what);
  std::lock_guard lock(mutex_);
  private_copies_.push_back(loaded.handle);
  return loaded.address;
}

jit::CompilerModule& Toolchain::compiler() {
  std::lock_guard lock(mutex_);
  if (!compiler_) {
    try {
      compiler_ = jit::CompilerModule::load(jit::default_compiler_module_path(), jit::clang_resource_dir());
    } catch (const std::exception& e) {
      throw ToolchainError(std::string("kiln: cannot load the compiler: ") + e.what());
    }
  }
  return *compiler_;
}

jit::CompileOutput Toolchain::compile(const std::string& source, const std::string& file_name) {
  // No CPU named: the module compiles for the host as LLVM sees it, the host
  // whose identity (target()) is in the key.
  return compiler().compile({.source = source, .file_name = file_name, .cpu = {}, .features = {}, .opt_level = kOptLevel});
}

}  // namespace kiln::runtime
