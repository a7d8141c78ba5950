// Shared by the jit suites: one compiler module per test process, compile and
// load helpers, an environment-variable guard, a temporary folder, and a way
// to run a check in a fresh copy of the test process.
#pragma once

#include <gnu/libc-version.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "base/failure.hpp"
#include "jit/compiler_module.hpp"
#include "jit/shared_object_loader.hpp"
#include "tests/support/temp_dir.hpp"

namespace kiln::jit::test {

// The message of a failed Result; "" when it holds a value.
template <class T>
std::string failure_of(const base::Result<T>& result) {
  return result ? std::string() : result.error().message;
}

// The value of `result`; when it failed, throws its message (gtest reports it).
template <class T>
T value_of(base::Result<T> result) {
  if (!result) throw std::runtime_error(result.error().message);
  return std::move(*result);
}

// The module, loaded once per process (ctest runs each test in its own process).
inline const CompilerModule& compiler() {
  static const std::unique_ptr<CompilerModule> module =
      value_of(CompilerModule::load(default_compiler_module_path(), value_of(clang_resource_dir())));
  return *module;
}

// A request for the host: an empty cpu (and features) means the host's CPU
// and features as LLVM sees them (-march=native).
inline CompileInput host_input(std::string source, std::string file_name = "test_kernel.cpp") {
  CompileInput input;
  input.source = std::move(source);
  input.file_name = std::move(file_name);
  return input;
}

// Compiles for the host; fails the current test (with clang's and lld's
// messages) when it does not compile. The ELF shared object on success.
inline std::vector<char> compile_for_host(const std::string& source) {
  CompileOutput output = compiler().compile(host_input(source));
  EXPECT_TRUE(output.ok) << output.diagnostics;
  return output.binary;
}

// Whether this process's glibc (2.35 on) loads objects whose dynamic section
// is read-only: there self-contained kernels are linked -z rodynamic.
inline bool glibc_reads_readonly_dynamic() {
  unsigned major = 0, minor = 0;
  if (std::sscanf(::gnu_get_libc_version(), "%u.%u", &major, &minor) != 2) return false;
  return major > 2 || (major == 2 && minor >= 35);
}

// Kernels loaded by one test (load_shared_object_bytes), unloaded newest
// first when it goes out of scope.
class LoadedObjects {
 public:
  LoadedObjects() = default;
  ~LoadedObjects() {
    for (auto it = objects_.rbegin(); it != objects_.rend(); ++it) unload_shared_object(*it);
  }
  LoadedObjects(const LoadedObjects&) = delete;
  LoadedObjects& operator=(const LoadedObjects&) = delete;

  LoadedObject load(const std::vector<char>& binary, const std::string& symbol, const std::string& what = {}) {
    LoadedObject loaded =
        value_of(load_shared_object_bytes(binary, symbol, what.empty() ? "test kernel " + symbol : what));
    objects_.push_back(loaded);
    return loaded;
  }

  template <typename Fn>
  Fn function(const std::vector<char>& binary, const std::string& symbol, const std::string& what = {}) {
    return reinterpret_cast<Fn>(load(binary, symbol, what).address);
  }

 private:
  std::vector<LoadedObject> objects_;
};

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

// The message of the std::runtime_error `action` throws; "" when it throws none.
inline std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::runtime_error& e) {
    return e.what();
  }
  return "";
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
class TempDir : public kiln::testing::TempDir {
 public:
  TempDir() : kiln::testing::TempDir("kiln-jit-test") {}
};

// --- checks in a fresh process -------------------------------------------
// Some checks need a process that has done nothing yet (no compiler module
// mapped, glibc's CPU data read on a chosen CPU), whether ctest runs each test
// in its own process or the executable runs them all. run_fresh_process()
// starts this executable again with KILN_JIT_TEST_CHILD=<name>; a static
// initializer made with register_child_check() sees it, runs the check before
// main (before gtest) and exits with its result: nothing else runs there.

inline constexpr const char* kChildVariable = "KILN_JIT_TEST_CHILD";

struct ChildResult {
  int exit_code = -1;   // -1: it did not exit normally
  std::string output;   // what it wrote to stdout and stderr
};

// In a static initializer: `const bool registered = register_child_check("name", check);`
// check() writes what the parent should see to stdout and returns the exit code.
inline bool register_child_check(const char* name, const std::function<int()>& check) {
  const char* wanted = std::getenv(kChildVariable);
  if (wanted == nullptr || std::strcmp(wanted, name) != 0) return false;
  int code = 3;
  try {
    code = check();
  } catch (const std::exception& e) {
    std::fprintf(stdout, "child check '%s' threw: %s\n", name, e.what());
  }
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(code);
}

// Runs this executable (or a copy of it) again in child-check mode `name`,
// with `extra_env` added and, when `cpu` is set, pinned to that CPU from its
// first instruction.
inline ChildResult run_fresh_process(const std::string& name,
                                     const std::vector<std::pair<std::string, std::string>>& extra_env = {},
                                     std::optional<int> cpu = std::nullopt,
                                     const std::string& executable = "/proc/self/exe") {
  ChildResult result;
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) {
    result.output = std::string("pipe: ") + std::strerror(errno);
    return result;
  }
  std::vector<std::string> env_strings;
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::strncmp(*e, "KILN_JIT_TEST_CHILD=", 20) != 0) env_strings.emplace_back(*e);
  }
  env_strings.push_back(std::string(kChildVariable) + "=" + name);
  for (const auto& [key, value] : extra_env) env_strings.push_back(key + "=" + value);
  std::vector<char*> envp;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::string program = executable;
  char* argv[] = {program.data(), nullptr};
  cpu_set_t set;
  CPU_ZERO(&set);
  if (cpu) CPU_SET(*cpu, &set);

  const pid_t pid = ::fork();
  if (pid < 0) {
    result.output = std::string("fork: ") + std::strerror(errno);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    return result;
  }
  if (pid == 0) {  // only async-signal-safe calls from here to exec
    ::dup2(pipe_fds[1], STDOUT_FILENO);
    ::dup2(pipe_fds[1], STDERR_FILENO);
    ::close(pipe_fds[0]);
    ::close(pipe_fds[1]);
    if (cpu && ::sched_setaffinity(0, sizeof set, &set) != 0) {
      static const char message[] = "sched_setaffinity failed\n";
      (void)!::write(STDOUT_FILENO, message, sizeof message - 1);
      ::_exit(2);
    }
    ::execve(program.c_str(), argv, envp.data());
    static const char message[] = "execve failed\n";
    (void)!::write(STDOUT_FILENO, message, sizeof message - 1);
    ::_exit(2);
  }
  ::close(pipe_fds[1]);
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(pipe_fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(status)) result.exit_code = WEXITSTATUS(status);
  return result;
}

}  // namespace kiln::jit::test
