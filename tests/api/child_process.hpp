// A child process for the crash tests: spawned with extra environment
// variables, its stdout read line by line through a pipe, its stderr in a
// file, killed or waited for with a deadline. posix_spawn rather than fork:
// the tests spawn while reader threads run, and a forked copy of a threaded
// process may only call async-signal-safe functions before exec.
#pragma once

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

extern char** environ;

namespace kiln::testing {

class ChildProcess {
 public:
  using Clock = std::chrono::steady_clock;

  // Runs `args` (args[0] is the program) with `env` added to this process's
  // environment; stderr goes to `stderr_file`.
  ChildProcess(const std::vector<std::string>& args, const std::map<std::string, std::string>& env,
               const std::filesystem::path& stderr_file)
      : stderr_file_(stderr_file) {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw std::runtime_error("pipe2 failed");
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
    posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, stderr_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> env_text = environment_with(env);
    const int error = ::posix_spawn(&pid_, args[0].c_str(), &actions, nullptr, pointers(args).data(),
                                    pointers(env_text).data());
    posix_spawn_file_actions_destroy(&actions);
    ::close(fds[1]);
    out_ = fds[0];
    if (error != 0) throw std::runtime_error("posix_spawn " + args[0] + ": " + std::strerror(error));
  }
  ~ChildProcess() {
    if (!status_) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
    ::close(out_);
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }

  // The next line of stdout, or nothing at end of file or after `timeout`.
  std::optional<std::string> read_line(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    for (;;) {
      if (const std::size_t end = buffer_.find('\n'); end != std::string::npos) {
        std::string line = buffer_.substr(0, end);
        buffer_.erase(0, end + 1);
        lines_.push_back(line);
        return line;
      }
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
      pollfd p{out_, POLLIN, 0};
      if (left.count() <= 0 || ::poll(&p, 1, static_cast<int>(left.count())) <= 0) return std::nullopt;
      char chunk[4096];
      const ssize_t n = ::read(out_, chunk, sizeof chunk);
      if (n <= 0) return std::nullopt;
      buffer_.append(chunk, static_cast<std::size_t>(n));
    }
  }
  // Reads stdout up to end of file (or `timeout`); returns every line read so far.
  const std::vector<std::string>& read_all(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (read_line(std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()))) {
    }
    return lines_;
  }
  // The value of the last "name value" line read, or "" when there was none.
  std::string value(const std::string& name) const {
    std::string found;
    for (const std::string& line : lines_)
      if (line.starts_with(name + " ")) found = line.substr(name.size() + 1);
    return found;
  }

  // The same read as a number; 0 when there was none.
  double number(const std::string& name) const { return std::strtod(value(name).c_str(), nullptr); }

  // The wait status once the child ended, or nothing if it still runs after `timeout`.
  std::optional<int> wait(std::chrono::milliseconds timeout) {
    const auto deadline = Clock::now() + timeout;
    while (!status_) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) status_ = status;
      else if (Clock::now() >= deadline) break;
      else std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return status_;
  }
  bool running() { return !wait(std::chrono::milliseconds(0)); }
  void kill(int signal = SIGKILL) {
    if (!status_) ::kill(pid_, signal);
  }
  bool exited_ok() { return status_ && WIFEXITED(*status_) && WEXITSTATUS(*status_) == 0; }

  std::string stderr_text() const {
    std::ifstream in(stderr_file_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }

 private:
  static std::vector<std::string> environment_with(const std::map<std::string, std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; *e; ++e) {
      const std::string entry = *e;
      if (!extra.contains(entry.substr(0, entry.find('=')))) env.push_back(entry);
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
  }
  // argv/envp style: the strings' pointers and a null. `text` must outlive the result.
  static std::vector<char*> pointers(const std::vector<std::string>& text) {
    std::vector<char*> out;
    for (const std::string& s : text) out.push_back(const_cast<char*>(s.c_str()));
    out.push_back(nullptr);
    return out;
  }

  pid_t pid_ = -1;
  int out_ = -1;
  std::filesystem::path stderr_file_;
  std::string buffer_;
  std::vector<std::string> lines_;
  std::optional<int> status_;
};

// How many times `needle` occurs in `text`.
inline int count_of(const std::string& text, const std::string& needle) {
  int n = 0;
  for (std::size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) ++n;
  return n;
}

// The $XDG_RUNTIME_DIR of a crash test's processes: beside their cache, so
// their build slots are the test's own, not the user's machine-wide ones. A
// test that stops a compiling child (SIGSTOP) must not make another test,
// running at the same time, warn of stopped slot holders.
inline std::filesystem::path runtime_dir_beside(const std::filesystem::path& cache_dir) {
  const auto folder = cache_dir.parent_path() / "xdg-runtime";
  std::filesystem::create_directories(folder);
  std::filesystem::permissions(folder, std::filesystem::perms::owner_all);
  return folder;
}

// The build slots a crash test's own process shares with its children.
inline std::filesystem::path build_slots_beside(const std::filesystem::path& cache_dir) {
  return runtime_dir_beside(cache_dir) / "kiln" / "build-slots";
}

// The crash tests' child program (crash_child.cpp) running `args`, with its
// cache at `cache_dir`, its warnings in `log`, and `env` set besides.
inline std::unique_ptr<ChildProcess> crash_child(std::vector<std::string> args, const std::filesystem::path& cache_dir,
                                                 const std::filesystem::path& log,
                                                 std::map<std::string, std::string> env = {}) {
  args.insert(args.begin(), KILN_CRASH_CHILD);
  env.emplace("XDG_RUNTIME_DIR", runtime_dir_beside(cache_dir).string());
  env.emplace("KILN_CACHE_DIR", cache_dir.string());
  env.emplace("KILN_LOG_LEVEL", "warn");
  return std::make_unique<ChildProcess>(args, env, log);
}

}  // namespace kiln::testing
