// Across processes: a second process on the same cache compiles nothing,
// gives the same outputs, and never maps clang.
#include <sys/wait.h>

#include <cstdio>
#include <map>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// Runs the child with KILN_CACHE_DIR=dir; returns its "name value" lines.
std::map<std::string, std::string> run_child(const std::filesystem::path& dir) {
  const std::string command = "KILN_CACHE_DIR='" + dir.string() + "' KILN_LOG_LEVEL=error '" KILN_TEST_CHILD "'";
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  std::map<std::string, std::string> lines;
  char name[64], value[64];
  while (std::fscanf(pipe, "%63s %63s", name, value) == 2) lines[name] = value;
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed: " << command;
  return lines;
}

TEST(Processes, SecondProcessStartsWarmWithoutClang) {
  TempDir dir;
  const auto cold = run_child(dir.path());
  const auto warm = run_child(dir.path());
  EXPECT_EQ(cold.at("compiles"), "2");
  EXPECT_EQ(cold.at("disk_hits"), "0");
  EXPECT_EQ(cold.at("clang_mapped"), "1");
  EXPECT_EQ(warm.at("compiles"), "0");
  EXPECT_EQ(warm.at("disk_hits"), "2");
  EXPECT_EQ(warm.at("clang_mapped"), "0");
  EXPECT_EQ(cold.at("checksum"), warm.at("checksum"));
  EXPECT_EQ(entry_files(dir.path()).size(), 2u);
}

}  // namespace
}  // namespace kiln::testing
