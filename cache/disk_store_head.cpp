// DiskStore::read_metadata: an entry's header and metadata from the file's
// first bytes. The index rebuild reads every entry this way, so the payload
// (an object file, often much larger) is never read.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <vector>

#include "cache/disk_store.hpp"
#include "cache/entry_format.hpp"
#include "cache/posix_file.hpp"

namespace kiln::cache {

namespace {

// Enough for the header and any metadata kiln writes today, so one read serves.
constexpr std::size_t kFirstRead = 4096;

// Closes the descriptor on every path out of read_metadata().
class ReadOnlyFile {
 public:
  explicit ReadOnlyFile(const std::filesystem::path& path)
      : fd_(::open(path.c_str(), O_RDONLY | O_CLOEXEC)), open_error_(fd_ < 0 ? errno : 0) {}
  ~ReadOnlyFile() {
    if (fd_ >= 0) ::close(fd_);  // read-only: a failing close loses nothing
  }
  ReadOnlyFile(const ReadOnlyFile&) = delete;
  ReadOnlyFile& operator=(const ReadOnlyFile&) = delete;
  int fd() const { return fd_; }
  int open_error() const { return open_error_; }

 private:
  int fd_;
  int open_error_;
};

// Fills `out` from offset 0 up to its size or end of file, through short
// reads and EINTR; shrinks it to what was read. Returns errno, 0 on success.
int read_prefix(int fd, std::vector<char>& out) {
  std::size_t used = 0;
  while (used < out.size()) {
    const ssize_t n = ::pread(fd, out.data() + used, out.size() - used, static_cast<off_t>(used));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return errno;
    if (n == 0) break;
    used += static_cast<std::size_t>(n);
  }
  out.resize(used);
  return 0;
}

MetadataRead failed(const std::filesystem::path& path, std::string_view why) {
  return {std::nullopt, 0, path.string() + ": " + std::string(why)};
}

MetadataRead failed(const std::filesystem::path& path, std::string_view call, int error) {
  return {std::nullopt, 0, errno_text(path, call, error)};
}

}  // namespace

MetadataRead DiskStore::read_metadata(const Key& key) const {
  const std::filesystem::path path = entry_path(key);
  const ReadOnlyFile file(path);
  if (file.open_error() == ENOENT) return {};
  if (file.open_error() != 0) return failed(path, "open", file.open_error());
  struct stat info {};
  if (::fstat(file.fd(), &info) != 0) return failed(path, "fstat", errno);
  const auto file_size = static_cast<std::uint64_t>(info.st_size);

  std::vector<char> head(kFirstRead);
  if (const int error = read_prefix(file.fd(), head); error != 0) return failed(path, "pread", error);
  const HeadSize needed = head_size(head);
  if (needed.error != EntryError::none) return failed(path, describe(needed.error));
  if (needed.bytes > head.size() && head.size() == kFirstRead) {
    // More metadata than the first read held: at most kMaxMetadataSize, so a bounded second read.
    head.resize(needed.bytes);
    if (const int error = read_prefix(file.fd(), head); error != 0) return failed(path, "pread", error);
  }
  const DecodedHead decoded = decode_head(head, key);
  if (decoded.error != EntryError::none) return failed(path, describe(decoded.error));
  // The file's size stands in for reading the payload: a truncated or
  // extended entry is caught here, a flipped payload bit only by get().
  if (file_size < needed.bytes || file_size - needed.bytes != decoded.payload_size) {
    return failed(path, describe(EntryError::size_mismatch));
  }
  return {std::string(decoded.metadata), decoded.payload_size, {}};
}

}  // namespace kiln::cache
