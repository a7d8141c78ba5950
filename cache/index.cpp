// Opening and closing the index; the queries are in index_queries.cpp.
#include "cache/index.hpp"

#include <utility>

#include "base/log.hpp"
#include "cache/file_system_kind.hpp"
#include "cache/posix_file.hpp"
#include "cache/sqlite_library.hpp"
#include "cache/sqlite_statement.hpp"

namespace kiln::cache {

namespace {

constexpr std::string_view kCreateTable =
    "CREATE TABLE IF NOT EXISTS entries ("
    "key TEXT PRIMARY KEY, kernel TEXT, specialisation TEXT, backend TEXT, target TEXT, "
    "size INTEGER, compile_ms REAL, created INTEGER, last_used INTEGER, hits INTEGER)";

bool is_corruption(int rc) {
  const int primary = rc & 0xff;
  return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB;
}

// The mode is a constant, not a value: PRAGMA arguments cannot be bound.
bool set_journal_mode(sqlite3* db, std::string_view mode, const std::filesystem::path& path) {
  Statement pragma(db, "PRAGMA journal_mode=" + std::string(mode));
  if (pragma.step() != SQLITE_ROW) return false;
  if (const std::string actual = pragma.text(0); actual != mode) {
    base::log().info("kiln cache index {}: journal_mode is {}, not {}", path.string(), actual, mode);
  }
  return true;
}

}  // namespace

Index::Index(std::filesystem::path path, int busy_timeout_ms, Fold fold) : path_(std::move(path)) {
  if (open(busy_timeout_ms) && fold == Fold::now) fold_journal();
}

Index::~Index() {
  if (db_ != nullptr && sqlite().sqlite3_close(db_) != SQLITE_OK) {
    base::log().warn("kiln cache index {}: close: {}", path_.string(), sqlite().sqlite3_errmsg(db_));
  }
}

// Every statement here is finalized before fail() closes the connection:
// sqlite3_close() refuses (SQLITE_BUSY) while one is open.
bool Index::open(int busy_timeout_ms) {
  const std::filesystem::path folder = path_.parent_path();
  if (const base::Result<void> made = folder.empty() ? base::Result<void>() : make_folders(folder); !made) {
    return fail(path_.string() + ": cannot create its folder: " + made.error().message);
  }
  const auto sqlite_failed = [this](std::string_view step) {
    // A file that is not a database fails at the first statement that reads it.
    if (is_corruption(sqlite().sqlite3_extended_errcode(db_))) corrupt_.store(true, std::memory_order_release);
    return fail(path_.string() + ": " + std::string(step) + ": " + sqlite().sqlite3_errmsg(db_));
  };
  // SQLite's locks and WAL's shared memory are not reliable on network file
  // systems (SQLite's own advice): there kiln runs without the index, unless
  // KILN_INDEX_PATH puts it on a node-local disk. Said at info level: on a
  // cluster this is the expected case, once per process.
  if (const std::string_view network = network_file_system_name(folder); !network.empty()) {
    problem_ = path_.string() + ": on " + std::string(network) +
               ", where SQLite is unsafe; set KILN_INDEX_PATH to a node-local path to keep an index";
    base::log().info("kiln cache index off: {}", problem_);
    return false;
  }
  if (const base::Result<const SqliteLibrary*> library = load_sqlite(); !library) {
    return fail(path_.string() + ": " + library.error().message);
  }
  constexpr std::string_view mode = "wal";  // readers run beside a writer
  // NOMUTEX: mutex_ guards the connection, and also keeps a transaction's statements together.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_NOMUTEX;
  if (sqlite().sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) return sqlite_failed("open");
  sqlite().sqlite3_busy_timeout(db_, busy_timeout_ms);
  // The first statement reads the file header: a file that is not a database
  // fails here, and is left in place for open_or_rebuild_index() to rebuild.
  if (!set_journal_mode(db_, mode, path_)) return sqlite_failed("journal_mode");
  if (execute(db_, "PRAGMA synchronous=NORMAL") != SQLITE_DONE) return sqlite_failed("synchronous");
  if (execute(db_, kCreateTable) != SQLITE_DONE) return sqlite_failed("create table");
  return true;
}

void Index::fold_journal() {
  if (db_ == nullptr) return;
  const std::filesystem::path journal = journal_path(path_);
  const TakenJournal taken = take_journal(journal);
  if (taken.skipped != 0) {
    base::log().debug("kiln cache index {}: {} garbled journal records skipped", path_.string(), taken.skipped);
  }
  if (!taken.stored.empty() && !restore(taken.stored)) {
    for (const IndexRecord& record : taken.stored) append_stored(journal, record);
  }
  if (!add_hits(taken.hits)) append_hits(journal, std::span<const Hit>(taken.hits));
}

bool Index::fail(std::string problem) {
  if (db_ != nullptr && sqlite().sqlite3_close(db_) != SQLITE_OK) {
    base::log().warn("kiln cache index {}: close: {}", path_.string(), sqlite().sqlite3_errmsg(db_));
  }
  db_ = nullptr;
  problem_ = std::move(problem);
  base::log().warn("kiln cache index unusable, running without it: {}", problem_);
  return false;
}

// The first failure is a warning, later ones are debug lines: a full disk or
// a locked database fails every statement alike.
void Index::report(int rc, std::string_view what) const {
  const std::string message = sqlite().sqlite3_errmsg(db_);
  base::log().log(warned_ ? spdlog::level::debug : spdlog::level::warn, "kiln cache index {}: {}: {}",
                  path_.string(), what, message);
  warned_ = true;
  if (!is_corruption(rc) || broken_.load(std::memory_order_relaxed)) return;
  problem_ = path_.string() + ": " + std::string(what) + ": " + message;
  corrupt_.store(true, std::memory_order_release);
  broken_.store(true, std::memory_order_release);  // publishes problem_ to usable()'s callers
  base::log().warn("kiln cache index {} is corrupt; turned off until it is rebuilt", path_.string());
}

}  // namespace kiln::cache
