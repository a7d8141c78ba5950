#include "cache/hit_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>

#include <xxhash.h>

#include "cache/little_endian.hpp"
#include "cache/log.hpp"

namespace kiln::cache {
namespace {

constexpr std::size_t kRecordSize = 32;
constexpr std::size_t kSummed = 24;  // key and time; the checksum follows

// Closes on every path out; the lock goes with the descriptor.
class JournalFile {
 public:
  JournalFile(const std::filesystem::path& path, int flags)
      : fd_(::open(path.c_str(), flags | O_CLOEXEC | O_NOFOLLOW, 0600)) {}
  ~JournalFile() {
    if (fd_ >= 0) ::close(fd_);
  }
  JournalFile(const JournalFile&) = delete;
  JournalFile& operator=(const JournalFile&) = delete;
  int fd() const { return fd_; }
  bool lock(int operation) const {
    while (::flock(fd_, operation) != 0) {
      if (errno != EINTR) return false;
    }
    return true;
  }

 private:
  int fd_;
};

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

}  // namespace

std::filesystem::path hit_journal_path(const std::filesystem::path& index_path) {
  std::filesystem::path path = index_path;
  path += ".hits";
  return path;
}

std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Key> keys) {
  std::vector<Hit> hits;
  hits.reserve(keys.size());
  const std::int64_t now = unix_now();
  for (const Key& key : keys) hits.push_back({key, now});
  return append_hits(journal, hits);
}

std::uint64_t append_hits(const std::filesystem::path& journal, std::span<const Hit> hits) {
  if (hits.empty()) return 0;
  std::vector<char> records(hits.size() * kRecordSize);
  char* out = records.data();
  for (const Hit& hit : hits) {
    store_le<std::uint64_t>(out, hit.key.high);
    store_le<std::uint64_t>(out + 8, hit.key.low);
    store_le<std::uint64_t>(out + 16, static_cast<std::uint64_t>(hit.when));
    store_le<std::uint64_t>(out + kSummed, XXH3_64bits(out, kSummed));
    out += kRecordSize;
  }
  const JournalFile file(journal, O_WRONLY | O_APPEND | O_CREAT);
  if (file.fd() < 0 || !file.lock(LOCK_SH)) {
    log().debug("kiln cache: hits not noted in {}: {}", journal.string(), std::strerror(errno));
    return 0;
  }
  // One write with O_APPEND: records of concurrent appenders never interleave.
  ssize_t written = -1;
  do {
    written = ::write(file.fd(), records.data(), records.size());
  } while (written < 0 && errno == EINTR);
  struct stat info {};
  if (written != static_cast<ssize_t>(records.size()) || ::fstat(file.fd(), &info) != 0) {
    log().debug("kiln cache: hits not noted in {}: {}", journal.string(),
                written < 0 ? std::strerror(errno) : "short write");
    return 0;
  }
  return static_cast<std::uint64_t>(info.st_size);
}

TakenHits take_hits(const std::filesystem::path& journal) {
  TakenHits taken;
  const JournalFile file(journal, O_RDWR);
  if (file.fd() < 0) {
    if (errno != ENOENT) log().debug("kiln cache: cannot open {}: {}", journal.string(), std::strerror(errno));
    return taken;
  }
  if (!file.lock(LOCK_EX)) return taken;
  std::vector<char> bytes;
  char buffer[64 * 1024];
  for (;;) {
    const ssize_t n = ::read(file.fd(), buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    bytes.insert(bytes.end(), buffer, buffer + n);
  }
  if (::ftruncate(file.fd(), 0) != 0) {
    // Left as it is: folding it again later would count these hits twice.
    log().debug("kiln cache: cannot empty {}: {}", journal.string(), std::strerror(errno));
    return taken;
  }
  for (std::size_t at = 0; at + kRecordSize <= bytes.size(); at += kRecordSize) {
    const char* record = bytes.data() + at;
    if (load_le<std::uint64_t>(record + kSummed) != XXH3_64bits(record, kSummed)) {
      ++taken.skipped;
      continue;
    }
    taken.hits.push_back({{load_le<std::uint64_t>(record), load_le<std::uint64_t>(record + 8)},
                          static_cast<std::int64_t>(load_le<std::uint64_t>(record + 16))});
  }
  taken.skipped += (bytes.size() % kRecordSize) != 0 ? 1 : 0;
  return taken;
}

}  // namespace kiln::cache
