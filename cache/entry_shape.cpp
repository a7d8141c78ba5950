#include "cache/entry_shape.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cstdint>
#include <vector>

#include "base/open_file.hpp"
#include "base/posix_io.hpp"
#include "cache/entry_format.hpp"

namespace kiln::cache {

bool is_entry_shaped(const std::filesystem::path& path) {
  const base::OpenFile file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  struct stat info {};
  if (file.fd() < 0 || ::fstat(file.fd(), &info) != 0 || !S_ISREG(info.st_mode)) return false;
  const auto size = static_cast<std::uint64_t>(info.st_size);
  std::vector<char> tail(kTrailerSize);
  if (size >= kTrailerSize) {
    const base::Result<std::size_t> read = base::read_at(file.fd(), size - kTrailerSize, tail);
    if (read && *read == kTrailerSize) {
      const EntryError error = decode_trailer(tail).error;
      if (error != EntryError::bad_magic && error != EntryError::truncated_trailer) return true;
    }
  }
  std::vector<char> head(kOlderFormatProbeSize);
  const base::Result<std::size_t> read = base::read_at(file.fd(), 0, head);
  return read && *read == head.size() && is_older_format(head);
}

}  // namespace kiln::cache
