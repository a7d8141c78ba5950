// Across processes: a second process on the same cache compiles nothing,
// gives the same outputs, and never maps clang; many processes (or threads)
// on an empty cache compile each kernel exactly once between them.
#include <sys/wait.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <string>
#include <vector>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

std::string child_command(const std::filesystem::path& dir, const std::string& arguments = "") {
  return "KILN_CACHE_DIR='" + dir.string() + "' KILN_LOG_LEVEL=error '" KILN_TEST_CHILD "' " + arguments;
}

// Reads a started child's "name value" lines until it exits.
std::map<std::string, std::string> finish_child(FILE* pipe, const std::string& command) {
  std::map<std::string, std::string> lines;
  char name[64], value[64];
  while (std::fscanf(pipe, "%63s %63s", name, value) == 2) lines[name] = value;
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child failed: " << command;
  return lines;
}

// Runs the child with KILN_CACHE_DIR=dir; returns its "name value" lines.
std::map<std::string, std::string> run_child(const std::filesystem::path& dir) {
  const std::string command = child_command(dir);
  FILE* pipe = popen(command.c_str(), "r");
  if (!pipe) throw std::runtime_error("popen failed");
  return finish_child(pipe, command);
}

// Starts every child before reading any: they run at once.
std::vector<std::map<std::string, std::string>> run_children_at_once(const std::vector<std::string>& commands) {
  std::vector<FILE*> pipes;
  for (const std::string& command : commands) {
    pipes.push_back(popen(command.c_str(), "r"));
    if (!pipes.back()) throw std::runtime_error("popen failed");
  }
  std::vector<std::map<std::string, std::string>> results;
  for (std::size_t i = 0; i < pipes.size(); ++i) results.push_back(finish_child(pipes[i], commands[i]));
  return results;
}

std::uint64_t count_of(const std::map<std::string, std::string>& lines, const std::string& name) {
  const auto it = lines.find(name);
  return it == lines.end() ? ~0ull : std::stoull(it->second);
}

constexpr int kProcesses = 16;
constexpr int kKernels = 20;

// A warm process maps only what reading and loading cached kernels needs:
// not clang, not LLVM, not even SQLite (its hits go to the index's journal,
// as a compiling process's new entries do). A cold one maps no clang or LLVM
// either: it compiles in a worker process (jit/compile_workers.hpp).
TEST(Processes, SecondProcessStartsWarmWithoutClang) {
  TempDir dir;
  const auto cold = run_child(dir.path());
  const auto warm = run_child(dir.path());
  EXPECT_EQ(cold.at("compiles"), "2");
  EXPECT_EQ(cold.at("disk_hits"), "0");
  EXPECT_EQ(cold.at("clang_mapped"), "0");
  EXPECT_EQ(cold.at("llvm_mapped"), "0");
  EXPECT_EQ(cold.at("sqlite_mapped"), "0");  // its builds are noted in the index's journal
  EXPECT_EQ(warm.at("compiles"), "0");
  EXPECT_EQ(warm.at("disk_hits"), "2");
  EXPECT_EQ(warm.at("clang_mapped"), "0");
  EXPECT_EQ(warm.at("llvm_mapped"), "0");
  EXPECT_EQ(warm.at("sqlite_mapped"), "0");
  EXPECT_EQ(cold.at("checksum"), warm.at("checksum"));
  EXPECT_EQ(entry_files(dir.path()).size(), 2u);
}

// The count: 16 processes x 20 kernels on an empty cache compile 20
// times in all. Each round on a fresh cache: one by one (each process starts
// at another kernel), in batches, then both mixed.
TEST(Processes, SixteenProcessesOnAnEmptyCacheCompileEachKernelOnce) {
  for (const char* round : {"kernel", "batch", "mixed"}) {
    TempDir dir;
    std::vector<std::string> commands;
    for (int p = 0; p < kProcesses; ++p) {
      const bool batch = std::string(round) == "batch" || (std::string(round) == "mixed" && p % 2 == 0);
      commands.push_back(child_command(dir.path(), "many " + std::to_string(kKernels) + (batch ? " batch" : " kernel")));
    }
    std::uint64_t compiles = 0, disk_hits = 0;
    for (const auto& child : run_children_at_once(commands)) {
      EXPECT_EQ(count_of(child, "wrong"), 0u) << round;
      compiles += count_of(child, "compiles");
      disk_hits += count_of(child, "disk_hits");
    }
    EXPECT_EQ(compiles, static_cast<std::uint64_t>(kKernels)) << round;
    EXPECT_EQ(compiles + disk_hits, static_cast<std::uint64_t>(kKernels * kProcesses)) << round;
    // A batch that loaded or built its kernels one by one also wrote their bundle.
    const std::size_t bundles = std::string(round) == "kernel" ? 0 : 1;
    EXPECT_EQ(entry_files(dir.path()).size(), static_cast<std::size_t>(kKernels) + bundles) << round;
  }
}

}  // namespace
}  // namespace kiln::testing
