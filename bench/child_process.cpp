#include "bench/child_process.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cstring>
#include <sstream>
#include <stdexcept>

#include "bench/kiln_bench_support.hpp"
#include "bench/process_kernels.hpp"

extern char** environ;

namespace kiln_bench {
namespace {

std::vector<std::string> child_environment(const std::vector<std::string>& extra) {
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e)
    if (std::strncmp(*e, "KILN_", 5) != 0) env.emplace_back(*e);
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

}  // namespace

Spawner::Spawner(const std::vector<std::string>& argv, const std::vector<std::string>& env, const fs::path& out,
                 const fs::path& err)
    : argv_(argv), env_(child_environment(env)), out_(out.string()), err_(err.string()) {
  for (auto& a : argv_) cargv_.push_back(a.data());
  cargv_.push_back(nullptr);
  for (auto& e : env_) cenv_.push_back(e.data());
  cenv_.push_back(nullptr);
}

pid_t Spawner::start(std::int64_t& spawn_ns) {
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  spawn_ns = monotonic_ns();
  const int rc = posix_spawnp(&pid, cargv_[0], &actions, nullptr, cargv_.data(), cenv_.data());
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) throw std::runtime_error("cannot start " + argv_[0] + ": " + std::strerror(rc));
  return pid;
}

Child Spawner::finish(pid_t pid, std::int64_t spawn_ns) {
  Child child;
  child.spawn_ns = spawn_ns;
  rusage usage{};
  if (wait4(pid, &child.status, 0, &usage) != pid) throw std::runtime_error("wait4 failed");
  child.exit_ns = monotonic_ns();
  child.wall_s = double(child.exit_ns - spawn_ns) * 1e-9;
  // Not ru_maxrss: with posix_spawn (vfork semantics) it carries the parent's
  // peak from before exec; the helpers report their own VmHWM instead.
  child.cpu_ms = double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) * 1e3 +
                 double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) * 1e-3;
  return child;
}

std::string Spawner::error_text() const { return read_text(err_); }

void check_child(const Child& child, const Spawner& spawner) {
  if (child.ok()) return;
  throw std::runtime_error(spawner.command() + " failed (wait status " + std::to_string(child.status) +
                           "): " + spawner.error_text());
}

std::map<std::string, std::string> parse_lines(const std::string& text) {
  std::map<std::string, std::string> out;
  std::istringstream in(text);
  std::string name, value;
  while (in >> name >> value) out[name] = value;
  return out;
}

long long field_ll(const std::map<std::string, std::string>& lines, const std::string& name) {
  const auto it = lines.find(name);
  if (it == lines.end()) throw std::runtime_error("helper output lacks '" + name + "'");
  return std::stoll(it->second);
}

}  // namespace kiln_bench
