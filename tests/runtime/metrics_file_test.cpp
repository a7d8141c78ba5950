// Issue 33, item 7: KILN_METRICS_FILE naming a FIFO that nobody reads kept
// the process from ending (open(2) waited for a reader). Now it is skipped.
// In a child with an alarm, so that a regression fails instead of hanging.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>

#include "runtime/metrics/metrics_file.hpp"

namespace kiln::runtime {
namespace {

TEST(MetricsFile, AFifoWithoutAReaderIsSkippedNotWaitedFor) {
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / ("kiln-metrics-fifo-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  const std::filesystem::path fifo = dir / "metrics.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    ::alarm(20);  // a write that waits for a reader ends here by SIGALRM
    write_metrics_file(fifo, "{}\n");
    ::_exit(0);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status;
  // A regular file is written as before.
  write_metrics_file(dir / "metrics.json", "{\"kernels\": {}}\n");
  std::ifstream in(dir / "metrics.json");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_EQ(text, "{\"kernels\": {}}\n");
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace kiln::runtime
