// Helpers shared by the cache tests: a fresh temporary folder per test, whole-
// file reads and writes, and a capture of what the cache logs.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>
#include <xxhash.h>

#include "base/failure.hpp"
#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "cache/index_journal.hpp"
#include "cache/key.hpp"
#include "cache/little_endian.hpp"
#include "tests/support/log_capture.hpp"
#include "tests/support/temp_dir.hpp"

namespace kiln::cache::testing {

namespace fs = std::filesystem;
using kiln::testing::LogCapture;

// mkdtemp under the system temp folder; removed, whatever a test did to its
// permissions, when the test ends.
class TempFolder : public kiln::testing::TempDir {
 public:
  TempFolder() : kiln::testing::TempDir("kiln-cache-test") {}
};

inline std::vector<char> bytes_of(std::string_view text) { return {text.begin(), text.end()}; }

inline std::vector<char> read_bytes(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_bytes(const fs::path& path, std::string_view bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + path.string());
}

inline void write_bytes(const fs::path& path, const std::vector<char>& bytes) {
  write_bytes(path, std::string_view(bytes.data(), bytes.size()));
}

// Every file under `dir` whose name marks a temporary of AtomicFile.
inline std::vector<fs::path> temp_files_under(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (auto it = fs::recursive_directory_iterator(dir, ec); !ec && it != fs::recursive_directory_iterator();
       it.increment(ec)) {
    if (it->path().filename().string().starts_with(".tmp.")) found.push_back(it->path());
  }
  return found;
}

inline Key key_of(std::string_view name) { return KeyBuilder().add("test", name).finish(); }

// A result's failure message, empty on success: for a test's output and its
// checks of what a failure names.
template <class T>
std::string failure_of(const base::Result<T>& result) {
  return result ? std::string() : result.error().message;
}

// The value of a result that must succeed: a failure fails the test (and
// gives a default value).
template <class T>
T value_of(base::Result<T> result) {
  EXPECT_TRUE(result.has_value()) << result.error().message;
  return result ? std::move(*result) : T{};
}

// Why a lookup missed, empty for a plain miss or a hit.
inline std::string problem_of(const LookupResult& found) { return found.problem ? found.problem->message : ""; }

// The same entry as format version 2 wrote it: the trailer's fields as a
// header at offset 0 (version 2, resealed), then the metadata, then the
// payload. `entry` is a whole, valid version-3 entry.
inline std::string older_format_of(std::string_view entry) {
  constexpr std::size_t kTrailer = 72, kVersionAt = 8, kMetadataSizeAt = 32, kSumAt = 64;
  const std::string_view body = entry.substr(0, entry.size() - kTrailer);
  std::string header(entry.substr(entry.size() - kTrailer));
  const std::size_t metadata_size = load_le<std::uint64_t>(header.data() + kMetadataSizeAt);
  const std::size_t payload_size = body.size() - metadata_size;
  store_le<std::uint32_t>(header.data() + kVersionAt, 2);
  store_le<std::uint64_t>(header.data() + kSumAt, XXH3_64bits(header.data(), kSumAt));
  return header + std::string(body.substr(payload_size)) + std::string(body.substr(0, payload_size));
}

inline unsigned mode_of(const fs::path& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? (info.st_mode & 07777U) : 0U;
}

// True when permission bits do not stop this process (root, CAP_DAC_OVERRIDE):
// probed, not guessed from the user id.
inline bool permissions_are_bypassed(const fs::path& scratch) {
  const fs::path folder = scratch / "probe";
  fs::create_directory(folder);
  ::chmod(folder.c_str(), 0500);
  std::ofstream probe(folder / "file");
  const bool bypassed = probe.good();
  probe.close();
  ::chmod(folder.c_str(), 0700);
  fs::remove_all(folder);
  return bypassed;
}

// A newly stored entry's row, as folding the journal writes it (created =
// last used = now, no hits), and hits noted now: what processes append to the
// journal, written to the index directly.
inline std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}
inline void record(Index& index, IndexRecord row) {
  row.created = row.last_used = unix_now();
  row.hits = 0;
  index.restore(std::span<const IndexRecord>(&row, 1));
}
inline void note_hits(Index& index, std::span<const Key> keys) {
  std::vector<Hit> hits;
  for (const Key& key : keys) hits.push_back({key, unix_now()});
  index.add_hits(hits);
}

}  // namespace kiln::cache::testing
