// What a kiln::Cache (kiln/cache.hpp) holds: the folder as cache/ opens it,
// where its index is, and the index once opened. Shared by the files that
// implement Cache's operations (cache.cpp, cache_read.cpp, cache_upkeep.cpp).
#pragma once

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/failure.hpp"
#include "cache/disk_store.hpp"
#include "cache/index.hpp"
#include "cache/index_record.hpp"
#include "cache/key.hpp"
#include "kiln/cache.hpp"

namespace kiln {

struct Cache::Impl {
  Impl(std::filesystem::path dir, const CacheOptions& options);

  // The index as a Runtime opens it, opened on first call and kept: made and
  // filled from the entries where missing, rebuilt where corrupt, its
  // journal folded in. Null when the index is off or the Cache read-only.
  // Throws Error (the index's problem) when the file at its path is not kiln's.
  cache::Index* index() const;
  // Drops the records of `keys` (entries that went), when there is an index.
  void forget(const std::vector<cache::Key>& keys) const;
  // Throws Error, naming the folder, when the Cache may not write.
  void require_writable(std::string_view operation) const;

  cache::DiskStore store;
  std::filesystem::path index_path;  // empty: off
  mutable std::unique_ptr<cache::Index> opened_index;
};

// The public form of cache/'s types (no cache/ type leaves libkiln).
CacheRecord record_of(const cache::IndexRecord& record);
std::vector<std::string> messages_of(const std::vector<base::Failure>& failures);
std::vector<std::string> hex_of(const std::vector<cache::Key>& keys);
std::chrono::system_clock::time_point system_time(std::filesystem::file_time_type time);
// The key of 32 hex digits (either case); throws ArgumentError for anything else.
cache::Key key_of(std::string_view text);

}  // namespace kiln
