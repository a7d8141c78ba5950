// The front end itself (jit/compiler/frontend.hpp) in the test process, one
// per process as one per compile worker: for the suites that compare objects
// byte for byte (the precompiled prelude, the gather choice).
#pragma once

#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "jit/compiler/frontend.hpp"
#include "jit/compiler_module.hpp"

namespace kiln::jit::compiler::test {

inline Frontend& frontend() {
  static const std::unique_ptr<Frontend> instance = [] {
    const base::Result<std::filesystem::path> resource_dir = clang_resource_dir();
    if (!resource_dir) throw std::runtime_error(resource_dir.error().message);
    std::string error;
    std::unique_ptr<Frontend> made = Frontend::create(resource_dir->string(), error);
    if (!made) throw std::runtime_error(error);
    return made;
  }();
  return *instance;
}

}  // namespace kiln::jit::compiler::test
