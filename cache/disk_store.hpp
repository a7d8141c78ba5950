// One file per entry under <dir>/<first 2 hex digits of the key>/<other 30>.
// Writes go to a temporary file in the same folder, are fsync'd, renamed into
// place and the folder fsync'd: readers see a whole entry or none. The entry
// files are the truth; the SQLite index (index.hpp) is only a catalogue.
#pragma once

#include <cstdint>
#include <filesystem>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/key.hpp"

namespace kiln::cache {

struct LookupResult {
  std::optional<std::vector<char>> payload;  // set on a hit
  // On a miss: empty when there was no entry; otherwise why the entry was
  // rejected (corrupt, unreadable...). A rejected entry is removed so the
  // next put() replaces it.
  std::string problem;
};

struct PutResult {
  bool ok = false;
  std::string error;  // names the path and the cause (errno text) when !ok
};

struct StoredEntry {
  Key key;
  std::uint64_t file_size = 0;
  std::filesystem::file_time_type modified;
};

// Thread-safe, and safe to share between processes: it holds nothing but the
// folder's path, and every change to the folder is one atomic rename or unlink.
class DiskStore {
 public:
  // Nothing is created until the first put(); folders are created 0700.
  explicit DiskStore(std::filesystem::path dir);

  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path entry_path(const Key& key) const;
  // The key's build lock file (build_lock.hpp): the entry's path plus ".lock".
  std::filesystem::path lock_path(const Key& key) const;

  LookupResult get(const Key& key) const;
  // Never leaves a partial file behind: on any error (disk full, read-only
  // folder...) the temporary file is removed and the error returned.
  PutResult put(const Key& key, std::span<const char> payload) const;

  // Every well-named entry file (not verified); temporary files are skipped.
  std::vector<StoredEntry> list() const;
  // Removes every entry and temporary file; returns how many entries went.
  std::size_t clear() const;

 private:
  std::filesystem::path dir_;
};

}  // namespace kiln::cache
