// DiskStore::read_metadata: an entry's trailer and metadata from the file's
// last bytes. The index rebuild reads every entry this way, so the payload
// (an object file, often much larger, at the front) is never read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "base/open_file.hpp"
#include "base/posix_io.hpp"
#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {

namespace {

// Enough for the trailer and any metadata kiln writes today, so one read serves.
constexpr std::size_t kLastRead = 4096;

// Fills `out` from `offset` up to its size or end of file, and shrinks it to
// what was read. A failure names the path.
base::Result<void> read_into(int fd, std::uint64_t offset, std::vector<char>& out, const std::filesystem::path& path) {
  const base::Result<std::size_t> read = base::read_at(fd, offset, out);
  if (!read) return base::failed(read.error().about(path));  // "<path>: pread: <strerror>"
  out.resize(*read);
  return {};
}

tl::unexpected<base::Failure> corrupt(const std::filesystem::path& path, EntryError error) {
  return base::failed({base::Failure::Kind::corrupt, 0, path.string() + ": " + std::string(describe(error))});
}

}  // namespace

base::Result<std::optional<MetadataRead>> DiskStore::read_metadata(const Key& key) const {
  const std::filesystem::path path = entry_path(key);
  // O_NONBLOCK: a FIFO put at the path must not stall a rebuild (posix_file.hpp).
  const base::OpenFile file(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY);
  if (file.open_error() == ENOENT) return std::nullopt;
  if (file.open_error() != 0) return base::failed(base::errno_failure(path, "open", file.open_error()));
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) return base::failed(base::errno_failure(path, "fstat", errno));
  if (!S_ISREG(info.st_mode) && !S_ISDIR(info.st_mode)) {  // a folder fails its pread: EISDIR
    return base::failed({base::Failure::Kind::io, 0,
                         path.string() + ": " + std::string(file_type_name(info.st_mode)) + ", not an entry file"});
  }
  const auto file_size = static_cast<std::uint64_t>(info.st_size);

  // The file's tail: the trailer, and most often the metadata before it.
  const auto tail_size = static_cast<std::size_t>(std::min<std::uint64_t>(file_size, kLastRead));
  const std::uint64_t tail_at = file_size - tail_size;
  std::vector<char> tail(tail_size);
  if (base::Result<void> read = read_into(file.fd(), tail_at, tail, path); !read) return base::failed(read.error());
  // Cut short since the fstat (not by kiln, which never writes an entry in
  // place): the bytes read do not end where the trailer was.
  if (tail.size() != tail_size) return corrupt(path, EntryError::size_mismatch);
  const DecodedTrailer trailer = decode_trailer(tail);
  if (trailer.error == EntryError::bad_magic) {
    // An entry of an older format (header first) says so rather than "bad magic".
    std::vector<char> first(kOlderFormatProbeSize);
    if (read_into(file.fd(), 0, first, path) && is_older_format(first)) {
      return corrupt(path, EntryError::unsupported_version);
    }
  }
  // The file's size stands in for reading the payload: a truncated or
  // extended entry is caught here, a flipped payload bit only by get().
  if (const EntryError error = check_key_and_sizes(trailer, key, file_size); error != EntryError::none) {
    return corrupt(path, error);
  }
  // At most kMaxMetadataSize (decode_trailer), and inside the file (check_key_and_sizes).
  const auto metadata_size = static_cast<std::size_t>(trailer.metadata_size);
  const std::uint64_t metadata_at = trailer.payload_size;
  std::string_view metadata;
  std::vector<char> more;
  if (metadata_at >= tail_at) {
    metadata = {tail.data() + (metadata_at - tail_at), metadata_size};
  } else {
    // More metadata than the first read held: a bounded second read.
    more.resize(metadata_size);
    if (base::Result<void> read = read_into(file.fd(), metadata_at, more, path); !read) {
      return base::failed(read.error());
    }
    metadata = {more.data(), more.size()};  // shorter when the file shrank meanwhile: check_metadata says so
  }
  if (const EntryError error = check_metadata(metadata, trailer); error != EntryError::none) {
    return corrupt(path, error);
  }
  return MetadataRead{std::string(metadata), trailer.payload_size};
}

}  // namespace kiln::cache
