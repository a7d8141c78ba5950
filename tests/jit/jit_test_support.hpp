// Shared by the jit suites: one compiler module per test process, compile and
// link helpers, an environment-variable guard and a temporary folder.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include "jit/compiler_module.hpp"
#include "jit/host_target.hpp"
#include "jit/object_loader.hpp"

namespace kiln::jit::test {

// The module, loaded once per process (ctest runs each test in its own process).
inline const CompilerModule& compiler() {
  static const std::unique_ptr<CompilerModule> module =
      CompilerModule::load(default_compiler_module_path(), clang_resource_dir());
  return *module;
}

inline CompileInput host_input(std::string source, std::string file_name = "test_kernel.cpp") {
  CompileInput input;
  input.source = std::move(source);
  input.file_name = std::move(file_name);
  input.cpu = host_target().cpu;
  input.features = host_target().features;
  return input;
}

// Compiles for the host; fails the current test (with clang's messages) when it does not compile.
inline std::vector<char> compile_for_host(const std::string& source) {
  CompileOutput output = compiler().compile(host_input(source));
  EXPECT_TRUE(output.ok) << output.diagnostics;
  return output.object;
}

template <typename Fn>
Fn load_function(ObjectLoader& loader, const std::vector<char>& object, const std::string& symbol) {
  return reinterpret_cast<Fn>(loader.load(object, symbol, "test object " + symbol));
}

// Sets (or unsets) an environment variable for one scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      ::unsetenv(name_.c_str());
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  std::string name_;
  std::optional<std::string> old_;
};

// A fresh folder under $TMPDIR, removed with everything in it.
class TempDir {
 public:
  TempDir() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-jit-test-XXXXXX").string();
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace kiln::jit::test
