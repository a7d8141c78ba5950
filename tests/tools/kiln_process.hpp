// Shared by the tests that run the built `kiln` (KILN_TOOL, a compile
// definition of their target): `kiln` run on a cache folder of its own with
// its exit and output (and TempDir, tests/support/temp_dir.hpp, for folders).
#pragma once

#include <stdlib.h>
#include <sys/wait.h>

#include <cstdio>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace kiln::testing {

struct Result {
  bool exited = false;  // a normal exit, not a crash
  int status = -1;
  std::string output;   // stdout and stderr
};

// Runs `kiln ARGS` (already quoted for the shell) on the cache folder `cache`.
inline Result run_kiln_with(const std::filesystem::path& cache, const std::string& args) {
  const std::string command =
      "KILN_CACHE_DIR='" + cache.string() + "' KILN_LOG_LEVEL=error '" KILN_TOOL "' " + args + " 2>&1";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  Result result;
  char buffer[4096];
  while (const std::size_t n = std::fread(buffer, 1, sizeof buffer, pipe)) result.output.append(buffer, n);
  const int status = pclose(pipe);
  result.exited = WIFEXITED(status);
  result.status = result.exited ? WEXITSTATUS(status) : -1;
  return result;
}

}  // namespace kiln::testing
