// kiln_parallel_bench: many processes starting at once on one cache, as the
// ranks of an MPI job on a node or the programs of a `make -j` do.
//
//   kiln_parallel_bench [--processes N] [--rounds R] [--one-by-one]
//
// For 1 and N processes: every process resolves the same 20 specialisations
// of update_theta_and_exner (process_kernels.hpp) and calls each once, first
// on an empty cache (cold), then again on the filled one (warm). Printed per
// case: the median wall time over R rounds from the first spawn to the last
// exit, the compiles summed over the processes, how many processes compiled
// (and so loaded clang), and the ratio to one process.
// A third cold case runs N processes without the build lock
// (KILN_LOCK_TIMEOUT=0): what each process compiling on its own costs.
// Workers resolve through Runtime::kernels (a batch), or with --one-by-one
// through Runtime::kernel, one call per kernel.
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/median.hpp"
#include "bench/process_kernels.hpp"
#include "kiln/kiln.hpp"

extern char** environ;

namespace {

namespace fs = std::filesystem;

// The worker: prints "compiles disk_hits checksum" on one line.
int worker(bool one_by_one) {
  kiln::Runtime rt;
  kiln_bench::ProcessFields fields;
  std::vector<kiln::KernelRequest> requests;
  for (int i = 0; i < kiln_bench::kProcessKernels; ++i)
    requests.push_back({"update_theta_and_exner", kiln_bench::process_spec(i)});
  std::vector<kiln::Kernel> kernels;
  if (one_by_one) {
    for (const auto& r : requests) kernels.push_back(rt.kernel(r.name, r.spec));
  } else {
    kernels = rt.kernels(requests);
  }
  for (const kiln::Kernel& k : kernels) k(fields.args[0], fields.args[1], fields.args[2], fields.args[3]);
  const kiln::KernelMetrics total = rt.metrics().total();
  std::printf("%llu %llu %.17g\n", static_cast<unsigned long long>(total.compiles),
              static_cast<unsigned long long>(total.disk_hits), fields.checksum());
  return 0;
}

struct Outcome {
  double wall_ms = 0;
  unsigned long long compiles = 0, disk_hits = 0;
  int builders = 0;  // processes that compiled (and so loaded clang)
};

// Spawns `processes` workers at once on `cache` and waits for all of them.
Outcome run_processes(int processes, const fs::path& cache, bool one_by_one, bool without_lock) {
  const std::string self = fs::read_symlink("/proc/self/exe").string();
  const std::string cache_var = "KILN_CACHE_DIR=" + cache.string();
  std::vector<std::string> env_text = {cache_var, "KILN_LOG_LEVEL=error"};
  if (without_lock) env_text.push_back("KILN_LOCK_TIMEOUT=0");
  // The caller's other KILN_* settings (KILN_BUILD_SLOTS, ...) pass through.
  for (char** e = environ; *e; ++e)
    if (std::strncmp(*e, "KILN_CACHE_DIR=", 15) != 0 && std::strncmp(*e, "KILN_LOG_LEVEL=", 15) != 0 &&
        std::strncmp(*e, "KILN_LOCK_TIMEOUT=", 18) != 0)
      env_text.push_back(*e);
  std::vector<char*> env;
  for (std::string& e : env_text) env.push_back(e.data());
  env.push_back(nullptr);
  std::string worker_flag = one_by_one ? "--worker-one-by-one" : "--worker";
  char* argv[] = {const_cast<char*>(self.c_str()), worker_flag.data(), nullptr};

  std::vector<std::pair<pid_t, int>> children;  // pid, read end of its stdout
  const std::int64_t start = kiln_bench::monotonic_ns();
  for (int p = 0; p < processes; ++p) {
    int pipe_fds[2];
    if (pipe(pipe_fds) != 0) throw std::runtime_error("pipe failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
    posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
    pid_t pid = 0;
    if (posix_spawn(&pid, self.c_str(), &actions, nullptr, argv, env.data()) != 0)
      throw std::runtime_error("posix_spawn failed");
    posix_spawn_file_actions_destroy(&actions);
    close(pipe_fds[1]);
    children.emplace_back(pid, pipe_fds[0]);
  }
  Outcome outcome;
  std::string checksum;
  for (auto [pid, fd] : children) {
    int status = 0;
    waitpid(pid, &status, 0);
    char line[256] = {};
    const ssize_t n = read(fd, line, sizeof line - 1);
    close(fd);
    unsigned long long compiles = 0, hits = 0;
    char sum[64] = {};
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || n <= 0 ||
        std::sscanf(line, "%llu %llu %63s", &compiles, &hits, sum) != 3)
      throw std::runtime_error("a worker failed");
    if (checksum.empty()) checksum = sum;
    if (checksum != sum) throw std::runtime_error("workers disagree on the outputs");
    outcome.compiles += compiles;
    outcome.builders += compiles > 0 ? 1 : 0;
    outcome.disk_hits += hits;
  }
  outcome.wall_ms = double(kiln_bench::monotonic_ns() - start) / 1e6;
  return outcome;
}

struct Case {
  std::string name;
  int processes;
  bool warm;
  bool without_lock;
};

}  // namespace

int main(int argc, char** argv) {
  int processes = 8, rounds = 5;
  bool one_by_one = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--worker" || a == "--worker-one-by-one") return worker(a == "--worker-one-by-one");
    if (a == "--processes" && i + 1 < argc) processes = std::atoi(argv[++i]);
    else if (a == "--rounds" && i + 1 < argc) rounds = std::atoi(argv[++i]);
    else if (a == "--one-by-one") one_by_one = true;
    else {
      std::fprintf(stderr, "usage: kiln_parallel_bench [--processes N] [--rounds R] [--one-by-one]\n");
      return 2;
    }
  }
  try {
    const std::string n = std::to_string(processes) + " processes";
    const std::vector<Case> cases = {{"1 process, cold", 1, false, false},
                                     {n + ", cold", processes, false, false},
                                     {n + ", cold, no build lock", processes, false, true},
                                     {"1 process, warm", 1, true, false},
                                     {n + ", warm", processes, true, false}};
    std::printf("%d kernels per process, %d processes, %s, median of %d rounds\n", kiln_bench::kProcessKernels,
                processes, one_by_one ? "Runtime::kernel one by one" : "Runtime::kernels (batch)", rounds);
    std::printf("%-30s %10s %10s %10s %9s %12s\n", "case", "wall ms", "compiles", "disk hits", "builders",
                "vs 1 process");
    double one_cold = 0, one_warm = 0;
    for (const Case& c : cases) {
      std::vector<double> walls;
      Outcome last;
      for (int r = 0; r < rounds; ++r) {
        const fs::path cache = fs::temp_directory_path() / ("kiln-parallel-bench-" + std::to_string(getpid()));
        fs::remove_all(cache);
        if (c.warm) run_processes(1, cache, one_by_one, false);  // fill it
        last = run_processes(c.processes, cache, one_by_one, c.without_lock);
        walls.push_back(last.wall_ms);
        fs::remove_all(cache);
      }
      const double wall = kiln_bench::median_of(walls);
      if (c.processes == 1) (c.warm ? one_warm : one_cold) = wall;
      const double base = c.warm ? one_warm : one_cold;
      std::printf("%-30s %10.1f %10llu %10llu %9d %11.2fx\n", c.name.c_str(), wall, last.compiles, last.disk_hits,
                  last.builders, wall / base);
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_parallel_bench: %s\n", e.what());
    return 1;
  }
}
