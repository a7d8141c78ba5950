// The SQLite index beside the entries: a best-effort catalogue for `kiln cache
// ls/stats` and, later, eviction and manifests. Every method swallows and logs
// its errors: an index problem never fails a load, and a busy database is
// waited for at most `busy_timeout_ms`.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/key.hpp"

struct sqlite3;

namespace kiln::cache {

struct IndexRecord {
  Key key;
  std::string kernel;
  std::string specialisation;  // JSON text
  std::string backend;         // "cpu"
  std::string target;          // triple, CPU name, features
  std::uint64_t size = 0;      // payload bytes
  double compile_ms = 0.0;
  std::int64_t created = 0;    // unix seconds
  std::int64_t last_used = 0;  // unix seconds
  std::int64_t hits = 0;
};

class Index {
 public:
  // Opens (creating if needed) the database at `path`. Never throws; a
  // failure leaves an index that does nothing and says why in problem().
  explicit Index(std::filesystem::path path, int busy_timeout_ms = 200);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  bool usable() const { return db_ != nullptr; }
  const std::string& problem() const { return problem_; }

  // Inserts or replaces the record of a newly stored entry (created = last_used = now, hits = 0).
  void record(const IndexRecord& record);
  // Adds one hit per key and sets last_used = now, in one transaction.
  void note_hits(std::span<const Key> keys);
  void remove(const Key& key);
  void clear();

  std::vector<IndexRecord> list() const;
  std::optional<IndexRecord> find(const Key& key) const;

 private:
  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  std::string problem_;
};

}  // namespace kiln::cache
