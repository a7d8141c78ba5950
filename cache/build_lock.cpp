#include "cache/build_lock.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <thread>
#include <utility>

#include "base/failure.hpp"
#include "base/open_file.hpp"
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

  const auto first_try = Clock::now();
  const auto deadline = first_try + timeout;
  auto pause = std::chrono::microseconds(100);
  bool refused = false;
  for (;;) {
    const int error = try_lock(fd);
    // Waiting starts at the first refusal: making the folder and the file
    // before it is not waiting for anyone.
    const Clock::duration waited = refused ? Clock::now() - first_try : Clock::duration::zero();
    if (error == 0) return BuildLock(fd, Outcome::acquired, {}, waited);
    if (error != EAGAIN && error != EACCES && error != EINTR) {  // ENOLCK, EINVAL: no locks on this file system
      ::close(fd);
      return BuildLock(-1, Outcome::unsupported, base::errno_text(lock_file, "fcntl(F_OFD_SETLK)", error));
    }
    if (Clock::now() >= deadline) {
      ::close(fd);
      return BuildLock(-1, Outcome::timed_out,
                       lock_file.string() + ": held by another process for " + std::to_string(timeout.count()) + " ms",
                       Clock::now() - first_try);
    }
    refused = true;
    std::this_thread::sleep_for(pause);
    pause = std::min<std::chrono::microseconds>(pause * 2, std::chrono::milliseconds(5));
  }
}

BuildLock::BuildLock(BuildLock&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)),
      outcome_(other.outcome_),
      problem_(std::move(other.problem_)),
      waited_(other.waited_) {}

BuildLock& BuildLock::operator=(BuildLock&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    outcome_ = other.outcome_;
    problem_ = std::move(other.problem_);
    waited_ = other.waited_;
  }
  return *this;
}

base::Result<void> BuildLock::write_note(std::string_view note) const {
  if (!held()) return base::failed(base::Failure{base::Failure::Kind::invalid, 0, "a build lock not held has no note"});
  if (::ftruncate(fd_, 0) != 0) return base::failed(base::errno_failure("ftruncate", errno));
  // A few bytes to a regular file: one pwrite, which signals do not interrupt.
  const ::ssize_t written = ::pwrite(fd_, note.data(), note.size(), 0);
  if (written != static_cast<::ssize_t>(note.size())) return base::failed(base::errno_failure("pwrite", written < 0 ? errno : EIO));
  return {};
}

std::string BuildLock::read_note(const std::filesystem::path& lock_file) {
  const base::OpenFile file(lock_file, O_RDONLY | O_NOFOLLOW | O_NONBLOCK);
  if (file.fd() < 0) return {};
  char buffer[64];
  const ::ssize_t n = ::pread(file.fd(), buffer, sizeof buffer, 0);
  return n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : std::string();
}

// Closing the only descriptor of the open file description releases an OFD lock.
BuildLock::~BuildLock() {
  if (fd_ >= 0) ::close(fd_);
}

}  // namespace kiln::cache
