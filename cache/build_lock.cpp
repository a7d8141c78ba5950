#include "cache/build_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "base/failure.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {
namespace {

using Clock = std::chrono::steady_clock;

// One try at the write lock on the whole file: 0 when taken, else errno.
int try_lock(int fd) {
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;  // l_start = l_len = 0: the whole file
  return ::fcntl(fd, F_OFD_SETLK, &lock) == 0 ? 0 : errno;
}

}  // namespace

// Polls rather than blocking in F_OFD_SETLKW: a blocking wait cannot time out
// without a signal, and a library must not take signals from its host. The
// pause grows from 0.1 ms to 5 ms: a short compile is picked up quickly, a
// long one costs a waiter a few hundred wake-ups a second at most.
BuildLock BuildLock::acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds timeout) {
  if (const base::Result<void> made = make_folders(lock_file.parent_path()); !made) {
    return BuildLock(-1, Outcome::unsupported, made.error().message);
  }
  const int fd = ::open(lock_file.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return BuildLock(-1, Outcome::unsupported, base::errno_text(lock_file, "open", errno));

  const auto deadline = Clock::now() + timeout;
  auto pause = std::chrono::microseconds(100);
  for (;;) {
    const int error = try_lock(fd);
    if (error == 0) return BuildLock(fd, Outcome::acquired, {});
    if (error != EAGAIN && error != EACCES && error != EINTR) {  // ENOLCK, EINVAL: no locks on this file system
      ::close(fd);
      return BuildLock(-1, Outcome::unsupported, base::errno_text(lock_file, "fcntl(F_OFD_SETLK)", error));
    }
    if (Clock::now() >= deadline) {
      ::close(fd);
      return BuildLock(-1, Outcome::timed_out,
                       lock_file.string() + ": held by another process for " + std::to_string(timeout.count()) + " ms");
    }
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

BuildLock::BuildLock(BuildLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), outcome_(other.outcome_), problem_(std::move(other.problem_)) {}

BuildLock& BuildLock::operator=(BuildLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    outcome_ = other.outcome_;
    problem_ = std::move(other.problem_);
  }
  return *this;
}

// Closing the only descriptor of the open file description releases an OFD lock.
BuildLock::~BuildLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kiln::cache
