// The per-key build lock: one process compiles a key while the others wait
// for its entry. An open-file-description lock (fcntl F_OFD_SETLK) on a lock
// file beside the entry: the kernel drops it when the holder's file closes,
// including when the holder dies, so a crashed compiler never blocks anyone;
// and, unlike classic POSIX record locks, two threads of one process that
// open the file separately exclude each other too.
//
// The lock files stay: removing one while a process waits on it would let a
// third process lock a new file of the same name beside the old one.
#pragma once

#include <chrono>
#include <filesystem>
#include <string>
#include <string_view>

#include "base/failure.hpp"

namespace kiln::cache {

class BuildLock {
 public:
  enum class Outcome {
    acquired,     // this process holds the lock until the BuildLock ends
    timed_out,    // another process held it for the whole timeout
    unsupported,  // the lock file cannot be made or locked here (see problem())
  };

  // Waits at most `timeout` for the lock on `lock_file` (created 0600, with its
  // folder, if missing). Never throws. A lock not kept locks nothing.
  [[nodiscard]] static BuildLock acquire(const std::filesystem::path& lock_file, std::chrono::milliseconds timeout);

  BuildLock(BuildLock&& other) noexcept;
  BuildLock& operator=(BuildLock&& other) noexcept;
  BuildLock(const BuildLock&) = delete;
  BuildLock& operator=(const BuildLock&) = delete;
  ~BuildLock();  // releases the lock

  Outcome outcome() const { return outcome_; }
  bool held() const { return outcome_ == Outcome::acquired; }
  // Why the lock is unsupported or timed out: names the path and the cause.
  const std::string& problem() const { return problem_; }
  // How long acquire() waited for a holder: zero when the first try took the
  // lock. Making the lock's file (and on a new cache its folder) is not waiting.
  std::chrono::steady_clock::duration waited() const { return waited_; }

  // Replaces the lock file's content with `note` (a holder writes its pid,
  // so that a waiter can tell a stopped holder from a busy one). Held locks only.
  [[nodiscard]] base::Result<void> write_note(std::string_view note) const;
  // What the last holder of `lock_file` wrote there; empty when nothing was
  // written or the file cannot be read. Another holder may have taken the
  // lock since, and not written yet: a note is a hint, never proof.
  static std::string read_note(const std::filesystem::path& lock_file);

 private:
  BuildLock(int fd, Outcome outcome, std::string problem,
            std::chrono::steady_clock::duration waited = std::chrono::steady_clock::duration::zero())
      : fd_(fd), outcome_(outcome), problem_(std::move(problem)), waited_(waited) {}

  int fd_ = -1;
  Outcome outcome_ = Outcome::unsupported;
  std::string problem_;
  std::chrono::steady_clock::duration waited_{};
};

}  // namespace kiln::cache
