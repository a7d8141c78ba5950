// One run of the test child (child_main.cpp: both kernels resolved and run)
// with extra environment, and what it reported: for tests that play another
// host or node in a process of its own.
#pragma once

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <map>
#include <string>

#include "tests/api/child_process.hpp"

namespace kiln::testing {

struct ChildRun {
  bool ok = false;
  std::uint64_t compiles = 0, disk_hits = 0;
  std::string checksum, llvm_mapped, error;
};

// `env` is added to this process's (KILN_LOG_LEVEL=error unless it says
// otherwise); the child's stderr goes to `dir`/child.err.
inline ChildRun run_test_child(const std::filesystem::path& dir, std::map<std::string, std::string> env) {
  env.emplace("KILN_LOG_LEVEL", "error");
  ChildProcess child({KILN_TEST_CHILD}, env, dir / "child.err");
  child.read_all(std::chrono::seconds(120));
  child.wait(std::chrono::seconds(120));
  ChildRun run;
  run.ok = child.exited_ok();
  run.compiles = static_cast<std::uint64_t>(child.number("compiles"));
  run.disk_hits = static_cast<std::uint64_t>(child.number("disk_hits"));
  run.checksum = child.value("checksum");
  run.llvm_mapped = child.value("llvm_mapped");
  run.error = child.stderr_text();
  return run;
}

}  // namespace kiln::testing
