// An open file descriptor, closed on every path out.
#pragma once

#include <sys/types.h>

#include <cerrno>
#include <filesystem>

namespace kiln::base {

// open(2) with O_CLOEXEC added to `flags`; open_error() is its errno, 0 when
// open. Movable: a reader can hand the descriptor on (a loader maps the very
// file whose bytes were verified). A default or moved-from one holds none
// (fd() -1, open_error() EBADF).
class OpenFile {
 public:
  OpenFile() = default;
  OpenFile(const std::filesystem::path& path, int flags, mode_t mode = 0600);
  ~OpenFile();
  OpenFile(OpenFile&& other) noexcept;
  OpenFile& operator=(OpenFile&& other) noexcept;  // closes the descriptor it held
  OpenFile(const OpenFile&) = delete;
  OpenFile& operator=(const OpenFile&) = delete;

  int fd() const { return fd_; }
  int open_error() const { return open_error_; }

 private:
  int fd_ = -1;
  int open_error_ = EBADF;
};

}  // namespace kiln::base
