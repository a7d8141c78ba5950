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
  // Never destroyed: kernels may be called until the process ends, and static
  // destructors run in an order nobody controls. Process exit reclaims it.
  static jit::ObjectLoader* const shared = [] {
    try {
      return jit::ObjectLoader::create().release();
    } catch (const std::exception& e) {
      throw ToolchainError(std::string("kiln: cannot set up the object loader: ") + e.what());
    }
  }();
  return *shared;
}

Toolchain::~Toolchain() {
  if (linked_.empty()) return;
  jit::ObjectLoader& shared = loader();
  for (std::uint64_t id : linked_) shared.unload(id);
}

void* Toolchain::link(std::span<const char> object, const std::string& symbol, const std::string& what) {
  const jit::ObjectLoader::Linked linked = loader().link(object, symbol, what);
  std::lock_guard lock(mutex_);
  linked_.push_back(linked.id);
  return linked.address;
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
