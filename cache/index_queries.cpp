// The index's queries. Each takes mutex_, does nothing on an unusable index,
// and logs and swallows its SQLite errors (see report()).

#include <algorithm>
#include <unordered_map>
#include <vector>

#include "base/log.hpp"
#include "cache/index.hpp"
#include "cache/sqlite_library.hpp"
#include "cache/sqlite_statement.hpp"

namespace kiln::cache {

namespace {

// The columns of a record, with the kernel file and digest where the table
// has them (Index::add_columns()).
std::string columns(bool kernel_files) {
  return std::string("key, kernel, specialisation, backend, target, size, compile_ms, created, last_used, hits") +
         (kernel_files ? ", kernel_file, kernel_digest" : "");
}

// False for a row whose key is not one of ours (edited by hand?): skipped.
bool read_record(const Statement& row, IndexRecord& record, bool kernel_files) {
  if (!Key::from_hex(row.text(0), record.key)) return false;
  if (kernel_files) {
    record.kernel_file = row.text(10);
    record.kernel_digest = row.text(11);
  }
  record.kernel = row.text(1);
  record.specialisation = row.text(2);
  record.backend = row.text(3);
  record.target = row.text(4);
  record.size = static_cast<std::uint64_t>(row.integer(5));
  record.compile_ms = row.real(6);
  record.created = row.integer(7);
  record.last_used = row.integer(8);
  record.hits = row.integer(9);
  return true;
}

}  // namespace

// IMMEDIATE takes the write lock up front, so the busy timeout applies there
// and never in the middle of the batch.
//
// Hit counts are statistics noted when a runtime ends, so from here on the
// connection skips fsync (synchronous=OFF), for this commit and for the WAL
// checkpoint when it closes: durable hit counts would cost every warm process
// about 2 ms of fdatasync, more than resolving all its kernels. An application
// crash still loses nothing; a power loss may lose recent hits or, rarely,
// leave an index that reports corruption and turns itself off, never an entry.
bool Index::add_hits(std::span<const Hit> hits) {
  const std::lock_guard lock(mutex_);
  if (hits.empty()) return true;
  if (!live()) return false;
  // One update per key, not per hit: a folded journal holds the same few
  // kernels' hits from hundreds of processes (6,500 updates took ~10 ms).
  struct KeyHits {
    std::int64_t count = 0, last = 0;
  };
  std::unordered_map<Key, KeyHits, KeyHash> per_key;
  for (const Hit& hit : hits) {
    KeyHits& k = per_key[hit.key];
    ++k.count;
    k.last = std::max(k.last, hit.when);
  }
  if (const int rc = execute(db_, "PRAGMA synchronous=OFF"); rc != SQLITE_DONE) report(rc, "add_hits: synchronous");
  if (const int rc = execute(db_, "BEGIN IMMEDIATE"); rc != SQLITE_DONE) {
    report(rc, "add_hits: begin");
    return false;
  }
  int rc = SQLITE_DONE;
  {
    Statement update(db_, "UPDATE entries SET hits = hits + ?3, last_used = max(last_used, ?1) WHERE key = ?2");
    for (auto key = per_key.begin(); key != per_key.end() && rc == SQLITE_DONE; ++key) {
      rc = update.bind(1, key->second.last).bind(2, key->first.hex()).bind(3, key->second.count).run();
    }
  }
  if (rc == SQLITE_DONE) rc = execute(db_, "COMMIT");
  if (rc == SQLITE_DONE) return true;
  report(rc, "add_hits");
  if (sqlite().sqlite3_get_autocommit(db_) == 0) execute(db_, "ROLLBACK");  // still open after a failed COMMIT
  return false;
}

// One transaction: thousands of autocommits would each write a WAL frame.
bool Index::restore(std::span<const IndexRecord> records, Existing existing) {
  const std::lock_guard lock(mutex_);
  if (!live()) return false;
  if (records.empty()) return true;
  if (const int rc = execute(db_, "BEGIN IMMEDIATE"); rc != SQLITE_DONE) {
    report(rc, "restore: begin");
    return false;
  }
  int rc = SQLITE_DONE;
  {
    const char* verb = existing == Existing::replace ? "INSERT OR REPLACE" : "INSERT OR IGNORE";
    Statement insert(db_, std::string(verb) + " INTO entries (" + columns(kernel_files_) +
                              ") VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10" +
                              (kernel_files_ ? ", ?11, ?12)" : ")"));
    for (auto r = records.begin(); r != records.end() && rc == SQLITE_DONE; ++r) {
      if (kernel_files_) insert.bind(11, r->kernel_file).bind(12, r->kernel_digest);
      insert.bind(1, r->key.hex()).bind(2, r->kernel).bind(3, r->specialisation).bind(4, r->backend);
      insert.bind(5, r->target).bind(6, static_cast<std::int64_t>(r->size)).bind(7, r->compile_ms);
      rc = insert.bind(8, r->created).bind(9, r->last_used).bind(10, r->hits).run();
    }
  }
  if (rc == SQLITE_DONE) rc = execute(db_, "COMMIT");
  if (rc == SQLITE_DONE) return true;
  report(rc, "restore");
  if (sqlite().sqlite3_get_autocommit(db_) == 0) execute(db_, "ROLLBACK");
  return false;
}

void Index::remove(const Key& key) {
  const std::lock_guard lock(mutex_);
  if (!live()) return;
  Statement erase(db_, "DELETE FROM entries WHERE key = ?1");
  if (const int rc = erase.bind(1, key.hex()).run(); rc != SQLITE_DONE) report(rc, "remove " + key.hex());
}

void Index::clear() {
  const std::lock_guard lock(mutex_);
  if (!live()) return;
  if (const int rc = execute(db_, "DELETE FROM entries"); rc != SQLITE_DONE) report(rc, "clear");
}

std::vector<IndexRecord> Index::list() const {
  const std::lock_guard lock(mutex_);
  std::vector<IndexRecord> records;
  if (!live()) return records;
  Statement select(db_, "SELECT " + columns(kernel_files_) + " FROM entries ORDER BY kernel, key");
  int rc = select.step();
  for (; rc == SQLITE_ROW; rc = select.step()) {
    IndexRecord record;
    if (read_record(select, record, kernel_files_)) records.push_back(std::move(record));
  }
  if (rc != SQLITE_DONE) report(rc, "list");  // keeps the rows read so far
  return records;
}

std::optional<IndexRecord> Index::find(const Key& key) const {
  const std::lock_guard lock(mutex_);
  if (!live()) return std::nullopt;
  Statement select(db_, "SELECT " + columns(kernel_files_) + " FROM entries WHERE key = ?1");
  const int rc = select.bind(1, key.hex()).step();
  IndexRecord record;
  if (rc == SQLITE_ROW && read_record(select, record, kernel_files_)) return record;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE) report(rc, "find " + key.hex());
  return std::nullopt;
}

}  // namespace kiln::cache
