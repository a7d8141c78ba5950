#include "base/open_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace kiln::base {

OpenFile::OpenFile(const std::filesystem::path& path, int flags, mode_t mode)
    : fd_(::open(path.c_str(), flags | O_CLOEXEC, mode)), open_error_(fd_ < 0 ? errno : 0) {}

OpenFile::~OpenFile() {
  if (fd_ >= 0) ::close(fd_);  // callers that write check their writes; close adds nothing they could act on
}

OpenFile::OpenFile(OpenFile&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), open_error_(std::exchange(other.open_error_, EBADF)) {}

OpenFile& OpenFile::operator=(OpenFile&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    open_error_ = std::exchange(other.open_error_, EBADF);
  }
  return *this;
}

}  // namespace kiln::base
