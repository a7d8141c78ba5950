// The SQLite index beside the entries: a best-effort catalogue for `kiln cache
// ls/stats` and, later, eviction and manifests. Every method swallows and logs
// its errors: an index problem never fails a load, and a busy database is
// waited for at most `busy_timeout_ms`.
#pragma once

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/index_journal.hpp"
#include "cache/index_record.hpp"
#include "cache/key.hpp"

struct sqlite3;

namespace kiln::cache {

// Thread-safe: every method may be called from several threads (one SQLite
// connection, used under a mutex). Several processes may open one file; SQLite
// locks it, and a writer waits at most busy_timeout_ms.
class Index {
 public:
  // Opens the database at `path`, creating it where nothing is. Only a file
  // kiln made is opened (index_identity.hpp); anything else is refused()
  // and left untouched. Never throws; a failure leaves an index that does
  // nothing and says why in problem().
  // Opening folds the journal in (index_journal.hpp), unless `fold` is later:
  // then the caller calls fold_journal() (filling a missing index first).
  enum class Fold { now, later };
  explicit Index(std::filesystem::path path, int busy_timeout_ms = 200, Fold fold = Fold::now);
  ~Index();
  Index(const Index&) = delete;
  Index& operator=(const Index&) = delete;

  // False after a failed open, and also once a method finds the database
  // corrupt: from then on every method does nothing.
  bool usable() const { return db_ != nullptr && !broken_.load(std::memory_order_acquire); }
  // Written once, before usable() turns false: read it after usable() said false.
  const std::string& problem() const { return problem_; }
  // True when SQLite found the file corrupt or not a database, at the open or
  // later; the index is then unusable, and only a rebuild (index_rebuild.hpp)
  // helps. False for every other failure (locked, read-only, missing folder...),
  // which a rebuild would not cure and must not be answered with one.
  bool corrupt() const { return corrupt_.load(std::memory_order_acquire); }
  // True when the file at the path is not kiln's index (index_identity.hpp):
  // it was not opened, or nothing was written to it or beside it, and it is
  // never to be rebuilt or removed. Set by the constructor only.
  bool refused() const { return refused_; }

  // What processes noted in the journal since the index was last opened:
  // rows first, so the hits find them. What cannot be written goes back.
  void fold_journal();

  // One hit per element, last_used = the latest `when` of each key: the hits
  // of a journal (index_journal.hpp), in one transaction. False when they could
  // not be written (logged).
  bool add_hits(std::span<const Hit> hits);
  // Inserts records as they are (times and hits included), in one
  // transaction: the bulk load of an index rebuild, or the rows of a journal.
  // A record whose key has a row replaces it, or with Existing::keep leaves
  // it (filling a missing index must not undo what its journal brought).
  // False (and logged) when they could not be written.
  enum class Existing { replace, keep };
  bool restore(std::span<const IndexRecord> records, Existing existing = Existing::replace);
  void remove(const Key& key);
  void clear();

  std::vector<IndexRecord> list() const;
  std::optional<IndexRecord> find(const Key& key) const;

 private:
  bool open(int busy_timeout_ms);  // the constructor's work; false leaves db_ null
  void add_columns();               // migrates an older table; sets kernel_files_
  bool fail(std::string problem);   // closes, sets problem_, logs once
  bool refuse(const std::string& why);  // fail() for a file that is not kiln's index
  // Logs a failed SQLite call; a corrupt database turns the index off.
  // The caller holds mutex_.
  void report(int rc, std::string_view what) const;
  bool live() const { return db_ != nullptr && !broken_.load(std::memory_order_relaxed); }

  std::filesystem::path path_;
  sqlite3* db_ = nullptr;
  mutable std::string problem_;
  mutable std::mutex mutex_;  // one connection, one statement at a time, whole transactions
  mutable std::atomic<bool> broken_{false};
  mutable std::atomic<bool> corrupt_{false};
  bool refused_ = false;
  // The table has the kernel_file and kernel_digest columns (set by open()).
  bool kernel_files_ = false;
  mutable bool warned_ = false;  // report() has warned once; under mutex_
};

}  // namespace kiln::cache
