#include "cache/index_journal.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string_view>

#include <xxhash.h>

#include "base/log.hpp"
#include "base/open_file.hpp"
#include "base/posix_io.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index_identity.hpp"
#include "cache/little_endian.hpp"

namespace kiln::cache {
namespace {

enum Kind : std::uint8_t { kHit = 1, kStored = 2 };

constexpr std::size_t kHead = 4 + 4 + 16 + 8;  // size, kind and padding, key, time
constexpr std::size_t kSum = 8;
constexpr std::size_t kHitSize = kHead + kSum;
// A stored record carries metadata of at most 64 KiB (entry_format.hpp's limit).
constexpr std::size_t kMaxRecord = kHead + 8 + 64 * 1024 + kSum;

// flock, through EINTR. The lock goes when the descriptor is closed.
bool lock(const base::OpenFile& file, int operation) {
  while (::flock(file.fd(), operation) != 0) {
    if (errno != EINTR) return false;
  }
  return true;
}

bool is_regular(const base::OpenFile& file) {
  struct stat info {};
  return ::fstat(file.fd(), &info) == 0 && S_ISREG(info.st_mode);
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Appends one record (head, `body`, checksum) to `out`.
void put_record(std::vector<char>& out, Kind kind, const Key& key, std::int64_t when, std::string_view body) {
  const std::size_t at = out.size(), size = kHead + body.size() + kSum;
  out.resize(at + size);
  char* record = out.data() + at;
  store_le<std::uint32_t>(record, static_cast<std::uint32_t>(size));
  store_le<std::uint32_t>(record + 4, kind);
  store_le<std::uint64_t>(record + 8, key.high);
  store_le<std::uint64_t>(record + 16, key.low);
  store_le<std::uint64_t>(record + 24, static_cast<std::uint64_t>(when));
  std::memcpy(record + kHead, body.data(), body.size());
  store_le<std::uint64_t>(record + size - kSum, XXH3_64bits(record, size - kSum));
}

// The index the journal belongs to: its path without ".journal".
std::filesystem::path index_of(const std::filesystem::path& journal) {
  std::string path = journal.string();
  constexpr std::string_view suffix = ".journal";
  if (path.ends_with(suffix)) path.resize(path.size() - suffix.size());
  return path;
}

// A file that is not kiln's index (a misplaced KILN_INDEX_PATH) is said once
// per process at warning level, then at debug level, as is every other
// failure (the index is best-effort).
void warn_refused(const std::string& message, bool not_kilns = true) {
  static std::atomic<bool> warned{false};
  const bool first = not_kilns && !warned.exchange(true, std::memory_order_relaxed);
  base::log().log(first ? spdlog::level::warn : spdlog::level::debug, "kiln cache: nothing noted in a journal: {}",
                  message);
}

std::uint64_t append(const std::filesystem::path& journal, const std::vector<char>& records) {
  if (records.empty()) return 0;
  // Written only beside kiln's index, or where kiln will create one: never
  // beside a file that KILN_INDEX_PATH names by mistake (index_identity.hpp).
  if (const base::Result<void> claimed = claim_index_path(index_of(journal)); !claimed) {
    warn_refused(claimed.error().message, claimed.error().kind == base::Failure::Kind::invalid);
    return 0;
  }
  // O_NONBLOCK: a FIFO at the journal's path must not hang the runtime's end.
  const base::OpenFile file(journal, O_WRONLY | O_APPEND | O_CREAT | O_NOFOLLOW | O_NONBLOCK);
  if (file.fd() >= 0 && !is_regular(file)) {
    warn_refused(journal.string() + ": not a regular file, so not kiln's journal; left untouched");
    return 0;
  }
  if (file.fd() < 0 || !lock(file, LOCK_SH)) {
    base::log().debug("kiln cache: nothing noted in {}: {}", journal.string(),
                      std::strerror(file.fd() < 0 ? file.open_error() : errno));
    return 0;
  }
  // One write with O_APPEND: records of concurrent appenders never interleave.
  const base::Result<std::size_t> written = base::write_once(file.fd(), records);
  const bool whole = written && *written == records.size();
  struct stat info {};
  if (!whole || ::fstat(file.fd(), &info) != 0) {
    base::log().debug("kiln cache: nothing noted in {}: {}", journal.string(),
                      !written ? written.error().message : whole ? std::strerror(errno) : "short write");
    return 0;
  }
  return static_cast<std::uint64_t>(info.st_size);
}

// One record's content into `taken`; false when it is garbled.
bool take_record(const char* record, std::size_t size, TakenJournal& taken) {
  if (load_le<std::uint64_t>(record + size - kSum) != XXH3_64bits(record, size - kSum)) return false;
  const Key key{load_le<std::uint64_t>(record + 8), load_le<std::uint64_t>(record + 16)};
  const auto when = static_cast<std::int64_t>(load_le<std::uint64_t>(record + 24));
  const std::uint32_t kind = load_le<std::uint32_t>(record + 4);
  if (kind == kHit && size == kHitSize) {
    taken.hits.push_back({key, when});
    return true;
  }
  if (kind != kStored || size < kHead + 8 + kSum) return false;
  std::optional<IndexRecord> row =
      decode_metadata(std::string_view(record + kHead + 8, size - kHead - 8 - kSum));
  if (!row) return false;
  row->key = key;
  row->size = load_le<std::uint64_t>(record + kHead);
  row->created = row->last_used = when;
  row->hits = 0;
  taken.stored.push_back(std::move(*row));
  return true;
}

}  // namespace

std::filesystem::path journal_path(const std::filesystem::path& index_path) {
  std::filesystem::path path = index_path;
  path += ".journal";
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
  std::vector<char> records;
  records.reserve(hits.size() * kHitSize);
  for (const Hit& hit : hits) put_record(records, kHit, hit.key, hit.when, {});
  return append(journal, records);
}

std::uint64_t append_stored(const std::filesystem::path& journal, const IndexRecord& record) {
  std::string body(8, '\0');
  store_le<std::uint64_t>(body.data(), record.size);
  body += encode_metadata(record);
  std::vector<char> bytes;
  put_record(bytes, kStored, record.key, record.created != 0 ? record.created : unix_now(), body);
  return append(journal, bytes);
}

TakenJournal take_journal(const std::filesystem::path& journal) {
  TakenJournal taken;
  const base::OpenFile file(journal, O_RDWR | O_NOFOLLOW | O_NONBLOCK);
  if (file.fd() < 0) {
    if (file.open_error() != ENOENT)
      base::log().debug("kiln cache: cannot open {}: {}", journal.string(), std::strerror(file.open_error()));
    return taken;
  }
  if (!is_regular(file)) {  // not emptied: not kiln's
    base::log().warn("kiln cache: {} is not a regular file, so not kiln's journal; left untouched", journal.string());
    return taken;
  }
  if (!lock(file, LOCK_EX)) return taken;
  std::vector<char> bytes;
  if (const base::Result<void> read = base::read_to_end(file.fd(), 0, bytes); !read) {
    base::log().debug("kiln cache: cannot read {}: {}", journal.string(), read.error().message);
    return taken;  // left as it is, for a later fold
  }
  if (::ftruncate(file.fd(), 0) != 0) {
    // Left as it is: folding it again later would count its hits twice.
    base::log().debug("kiln cache: cannot empty {}: {}", journal.string(), std::strerror(errno));
    return taken;
  }
  std::size_t at = 0;
  while (bytes.size() - at >= kHitSize) {
    const std::size_t size = load_le<std::uint32_t>(bytes.data() + at);
    if (size < kHitSize || size > kMaxRecord || size > bytes.size() - at) break;  // nothing after it can be trusted
    if (!take_record(bytes.data() + at, size, taken)) ++taken.skipped;
    at += size;
  }
  taken.skipped += at < bytes.size() ? 1 : 0;
  return taken;
}

}  // namespace kiln::cache
