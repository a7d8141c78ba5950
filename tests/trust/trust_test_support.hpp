// Shared by the trust tests: a scratch folder, children forked from the test
// process (no exec: they need no access to the build tree, whatever user they
// become), dropping to another user, and a tmpfs in a mount namespace of a
// child's own.
#pragma once

#include <grp.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>

#include "tests/support/temp_dir.hpp"

namespace kiln::testing::trust {

namespace fs = std::filesystem;

// A child's exit code when what it needs is not permitted here (it prints why).
inline constexpr int kSkip = 77;

// mkdtemp under /tmp; removed, whatever was done to its permissions, at the end.
class ScratchFolder : public kiln::testing::TempDir {
 public:
  ScratchFolder() : kiln::testing::TempDir("kiln-trust-test") {}
};

struct Forked {
  int status = -1;     // the exit code, or 128 + the signal that ended it
  std::string output;  // what it wrote to stdout and stderr
};

// Runs `body` in a child forked from this process and returns how it ended.
// An exception out of `body` is printed and exits 3.
inline Forked run_forked(const std::function<int()>& body) {
  Forked result;
  int fds[2];
  if (::pipe(fds) != 0) throw std::runtime_error(std::string("pipe: ") + std::strerror(errno));
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error(std::string("fork: ") + std::strerror(errno));
  if (pid == 0) {
    ::dup2(fds[1], STDOUT_FILENO);
    ::dup2(fds[1], STDERR_FILENO);
    ::close(fds[0]);
    ::close(fds[1]);
    int code = 3;
    try {
      code = body();
    } catch (const std::exception& e) {
      std::printf("child threw: %s\n", e.what());
    }
    std::fflush(stdout);
    std::fflush(stderr);
    ::_exit(code);
  }
  ::close(fds[1]);
  char buffer[4096];
  for (;;) {
    const ssize_t n = ::read(fds[0], buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    result.output.append(buffer, static_cast<std::size_t>(n));
  }
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return result;
}

// In a child: becomes `uid` with primary group `gid` and the one
// supplementary group `group`. False (errno set) when not permitted.
inline bool become(uid_t uid, gid_t gid, gid_t group) {
  return ::setgroups(1, &group) == 0 && ::setresgid(gid, gid, gid) == 0 && ::setresuid(uid, uid, uid) == 0;
}

// In a child: a mount namespace of its own, where `folder` becomes a fresh
// tmpfs mounted with `flags` (MS_NOEXEC, MS_RDONLY). Prints why and returns
// false where that is not permitted (not root, no CAP_SYS_ADMIN, a seccomp
// profile that forbids unshare).
inline bool private_tmpfs(const fs::path& folder, unsigned long flags) {
  const auto refused = [](const char* what) {
    std::printf("%s is not permitted here: %s\n", what, std::strerror(errno));
    return false;
  };
  if (::unshare(CLONE_NEWNS) != 0) return refused("unshare(CLONE_NEWNS)");
  if (::mount("none", "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return refused("mount(MS_PRIVATE)");
  if (::mount("tmpfs", folder.c_str(), "tmpfs", flags, "mode=0755,size=64m") != 0) return refused("mount(tmpfs)");
  return true;
}

inline bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace kiln::testing::trust
