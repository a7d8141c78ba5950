#include "base/posix_io.hpp"

#include <sys/types.h>
#include <unistd.h>

#include <cerrno>

namespace kiln::base {

// Having read exactly `size_hint` in a read that asked for more is the end:
// asking again only to be told 0 cost a system call per cache entry.
Result<void> read_to_end(int fd, std::size_t size_hint, std::vector<char>& out) {
  out.resize(size_hint + 1);  // the extra byte sees end of file without a regrow
  std::size_t used = 0;
  for (;;) {
    if (used == out.size()) out.resize(out.size() * 2);
    const ssize_t n = ::read(fd, out.data() + used, out.size() - used);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno_failure("read", errno));
    if (n == 0) break;
    const bool short_read = used + static_cast<std::size_t>(n) < out.size();
    used += static_cast<std::size_t>(n);
    if (short_read && used == size_hint) break;
  }
  out.resize(used);
  return {};
}

Result<std::size_t> read_at(int fd, std::uint64_t offset, std::span<char> out) {
  std::size_t used = 0;
  while (used < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + used, out.size() - used, static_cast<off_t>(offset + used));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return failed(errno_failure("pread", errno));
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  return used;
}

Result<std::size_t> write_once(int fd, std::span<const char> bytes) {
  for (;;) {
    const ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n >= 0) return static_cast<std::size_t>(n);
    if (errno != EINTR) return failed(errno_failure("write", errno));
  }
}

Result<void> write_all(int fd, std::span<const char> bytes) {
  while (!bytes.empty()) {
    const Result<std::size_t> written = write_once(fd, bytes);
    if (!written) return failed(written.error());
    // write(2) returns 0 for a non-empty buffer only on odd devices: looping
    // would never end, so it counts as an I/O error.
    if (*written == 0) return failed(errno_failure("write", EIO));
    bytes = bytes.subspan(*written);  // a short write: go on with the rest
  }
  return {};
}

}  // namespace kiln::base
