// The helper processes kiln_bench times whole (kiln_bench_warm_process,
// kiln_bench_dlopen_process) and g++: spawned with posix_spawnp, their output
// to files, reaped with wait4 for their own CPU time, and the "name value"
// lines they print read back.
#pragma once

#include <sys/types.h>
#include <sys/wait.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace kiln_bench {

// A child process as it ended.
struct Child {
  int status = -1;
  double wall_s = 0.0;  // from just before posix_spawn to just after wait4
  double cpu_ms = 0.0;  // the child's own user + system time (its rusage from wait4)
  std::int64_t spawn_ns = 0, exit_ns = 0;  // CLOCK_MONOTONIC
  bool ok() const { return WIFEXITED(status) && WEXITSTATUS(status) == 0; }
};

// One command, run as often as asked: argv, an environment of ours without
// KILN_* (so no stray KILN_METRICS etc. changes what is timed) plus `env`,
// standard output and error to the files `out` and `err`.
class Spawner {
 public:
  Spawner(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::filesystem::path& out,
          const std::filesystem::path& err);

  pid_t start(std::int64_t& spawn_ns);
  static Child finish(pid_t pid, std::int64_t spawn_ns);
  Child run() {
    std::int64_t spawn_ns = 0;
    const pid_t pid = start(spawn_ns);
    return finish(pid, spawn_ns);
  }

  const std::string& command() const { return argv_[0]; }
  std::string error_text() const;

 private:
  std::vector<std::string> argv_, env_;
  std::string out_, err_;
  std::vector<char*> cargv_, cenv_;
};

// Throws, with the child's standard error, unless it exited with 0.
void check_child(const Child& child, const Spawner& spawner);

// "name value" lines, as the helper processes print them.
std::map<std::string, std::string> parse_lines(const std::string& text);
// The integer `name` of such lines; throws when it is missing.
long long field_ll(const std::map<std::string, std::string>& lines, const std::string& name);

}  // namespace kiln_bench
