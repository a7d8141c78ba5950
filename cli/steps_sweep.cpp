#include "cli/steps_sweep.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string_view>

#include <nlohmann/json.hpp>

#include "kiln/errors.hpp"

extern char** environ;

namespace kiln::cli {
namespace {

namespace fs = std::filesystem;

// The variables that would make a cold run warm or a warm one cold (another
// cache, read-only tiers, an index elsewhere, no cache), or write the metrics
// elsewhere: the sweep sets its own.
constexpr std::string_view kReplaced[] = {"KILN_CACHE_DIR=",     "KILN_CACHE_PATH=",   "KILN_INDEX_PATH=",
                                          "KILN_CACHE_DISABLE=", "KILN_METRICS_FILE=", "KILN_METRICS="};

std::vector<std::string> child_environment(const fs::path& cache, const fs::path& metrics_file) {
  std::vector<std::string> env;
  for (char** at = environ; *at; ++at) {
    const std::string_view entry(*at);
    bool replaced = false;
    for (std::string_view prefix : kReplaced) replaced = replaced || entry.starts_with(prefix);
    if (!replaced) env.emplace_back(entry);
  }
  env.push_back("KILN_CACHE_DIR=" + cache.string());
  env.push_back("KILN_METRICS_FILE=" + metrics_file.string());
  return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (std::string& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// This same `kiln`, its stdout to `output`; returns its exit status.
int run_demo_process(std::vector<std::string> args, std::vector<std::string> env, const fs::path& output) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, output.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  std::vector<char*> argv = pointers(args), envp = pointers(env);
  pid_t pid = -1;
  const int error = ::posix_spawn(&pid, "/proc/self/exe", &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (error != 0) throw Error(std::string("kiln demo --steps-sweep: cannot start kiln: ") + std::strerror(error));
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) throw Error(std::string("kiln demo --steps-sweep: waitpid: ") + std::strerror(errno));
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

nlohmann::json read_json(const fs::path& file) {
  std::ifstream in(file);
  nlohmann::json out = nlohmann::json::parse(in, nullptr, false);
  if (out.is_discarded()) throw Error("kiln demo --steps-sweep: " + file.string() + " holds no metrics JSON");
  return out;
}

// "1 steps, cold: init 812.3 ms, 61.2% of 1327 ms".
void say(int steps, const char* temperature, const nlohmann::json& m) {
  const double init = m["total"]["init_ms"].get<double>(), wall = m["process"]["wall_ms"].get<double>();
  std::printf("%6d steps, %s: init %9.1f ms, run %9.1f ms, %5.1f%% init of %.0f ms\n", steps, temperature, init,
              m["total"]["run_ms"].get<double>(), wall > 0 ? 100.0 * init / wall : 0.0, wall);
  std::fflush(stdout);  // a line per run as it ends, into a pipe or file too
}

// Runs the demo of `steps` steps on `cache`; the JSON and output are named for both.
nlohmann::json run_one(const SweepOptions& o, int steps, const char* temperature, const fs::path& cache) {
  const std::string stem = "demo-steps-" + std::to_string(steps) + "-" + temperature;
  const fs::path json = o.folder / (stem + ".json"), output = o.folder / (stem + ".txt");
  std::vector<std::string> args{"kiln", "demo", "--steps", std::to_string(steps)};
  args.insert(args.end(), o.demo_args.begin(), o.demo_args.end());
  const int status = run_demo_process(args, child_environment(cache, json), output);
  if (status != 0)
    throw Error("kiln demo --steps-sweep: the " + std::string(temperature) + " run of " + std::to_string(steps) +
                " steps exited with status " + std::to_string(status) + " (its output: " + output.string() + ")");
  nlohmann::json m = read_json(json);
  say(steps, temperature, m);
  return m;
}

}  // namespace

void run_steps_sweep(const SweepOptions& o) {
  fs::create_directories(o.folder);
  std::printf("kiln demo --steps-sweep: each length cold (an empty cache) then warm, in new processes; "
              "metrics JSON in %s\n",
              o.folder.c_str());
  std::fflush(stdout);
  for (int steps : o.steps) {
    // The pair's own cache, removed after: a cold run must find nothing.
    const fs::path cache = o.folder / ("cache-steps-" + std::to_string(steps));
    fs::remove_all(cache);
    run_one(o, steps, "cold", cache);
    run_one(o, steps, "warm", cache);
    fs::remove_all(cache);
  }
  std::printf("figures: kiln report %s/demo-steps-*.json -o FOLDER\n", o.folder.c_str());
}

}  // namespace kiln::cli
