// Opening and closing the index; the queries are in index_queries.cpp.
#include "cache/index.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include "base/log.hpp"
#include "base/open_file.hpp"
#include "cache/file_system_kind.hpp"
#include "cache/index_identity.hpp"
#include "cache/posix_file.hpp"
#include "cache/sqlite_library.hpp"
#include "cache/sqlite_statement.hpp"

namespace kiln::cache {

namespace {

constexpr std::string_view kColumns =
    "key TEXT PRIMARY KEY, kernel TEXT, specialisation TEXT, backend TEXT, target TEXT, "
    "size INTEGER, compile_ms REAL, created INTEGER, last_used INTEGER, hits INTEGER";

// Columns added since the first index, in order (issue 18: a user kernel's
// file and text digest). Added by ALTER TABLE to old and new indexes alike, so
// every migrated index has one schema text; earlier kilns, whose INSERTs and
// SELECTs name their columns, read and write such an index unchanged.
constexpr std::string_view kAddedColumns[] = {"kernel_file TEXT NOT NULL DEFAULT ''",
                                              "kernel_digest TEXT NOT NULL DEFAULT ''"};

// The table, as every kiln since the first creates it.
std::string create_table_sql() { return "CREATE TABLE IF NOT EXISTS entries (" + std::string(kColumns) + ")"; }

// The column's name: the first word of its definition.
std::string_view column_name(std::string_view definition) { return definition.substr(0, definition.find(' ')); }

bool has_column(sqlite3* db, std::string_view name) {
  Statement columns(db, "PRAGMA table_info(entries)");
  for (int rc = columns.step(); rc == SQLITE_ROW; rc = columns.step())
    if (columns.text(1) == name) return true;
  return false;
}

// The added columns an index lacks, in one transaction (another process may
// be adding them too: the second finds them there). SQLITE_DONE or the
// failing call's code.
int add_missing_columns(sqlite3* db) {
  int rc = execute(db, "BEGIN IMMEDIATE");
  for (const std::string_view column : kAddedColumns)
    if (rc == SQLITE_DONE && !has_column(db, column_name(column)))
      rc = execute(db, "ALTER TABLE entries ADD COLUMN " + std::string(column));
  if (rc == SQLITE_DONE) return execute(db, "COMMIT");
  if (sqlite().sqlite3_get_autocommit(db) == 0) execute(db, "ROLLBACK");
  return rc;
}

// The table's CREATE statement as SQLite records it (without IF NOT EXISTS)
// after `added` of kAddedColumns were added.
std::string table_sql(std::size_t added) {
  std::string sql = "CREATE TABLE entries (" + std::string(kColumns);
  for (std::size_t i = 0; i < added; ++i) sql += ", " + std::string(kAddedColumns[i]);
  return sql + ")";
}

// The table as kiln makes it, before or after any of kAddedColumns came.
bool is_kiln_table_sql(const std::string& sql) {
  for (std::size_t added = 0; added <= std::size(kAddedColumns); ++added)
    if (sql == table_sql(added)) return true;
  return false;
}

// What sqlite_master holds for kiln's index: the table as SQLite records its
// CREATE statement and the primary key's own index. An index made by an
// earlier kiln, without the application id, is recognised by exactly this,
// before or after the added columns came.
bool has_kiln_schema(sqlite3* db) {
  Statement select(db, "SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name");
  const std::string expected[2][3] = {{"index", "sqlite_autoindex_entries_1", "entries"},
                                      {"table", "entries", "entries"}};
  int row = 0;
  for (int rc = select.step(); rc != SQLITE_DONE; rc = select.step(), ++row) {
    if (rc != SQLITE_ROW || row >= 2) return false;
    for (int column = 0; column < 3; ++column)
      if (select.text(column) != expected[row][column]) return false;
    if (row == 0 && !select.text(3).empty()) return false;
    if (row == 1 && !is_kiln_table_sql(select.text(3))) return false;
  }
  return row == 2;
}

std::int64_t application_id(sqlite3* db, int& rc) {
  Statement pragma(db, "PRAGMA application_id");
  rc = pragma.step();
  return rc == SQLITE_ROW ? pragma.integer(0) : 0;
}

// A new index at `path`, made whole beside it and moved into place only if
// nothing is there meanwhile: the path never holds a half-made index, and a
// file another process put there first is never replaced. Made in rollback
// mode, so the application id and the table are in the file itself (not in a
// -wal) when it appears; the opener switches it to WAL. Fails naming the path.
base::Result<void> create_index_file(const std::filesystem::path& path) {
  static std::atomic<unsigned> counter{0};
  const std::string temp = path.string() + ".new." + std::to_string(::getpid()) + "." +
                           std::to_string(counter.fetch_add(1, std::memory_order_relaxed));
  const auto failed = [&](base::Failure failure) {
    ::unlink(temp.c_str());
    ::unlink((temp + "-journal").c_str());
    return base::failed(std::move(failure));
  };
  {
    // O_EXCL: an empty file of ours, which SQLite takes as a new database.
    const base::OpenFile made(temp, O_WRONLY | O_CREAT | O_EXCL, 0644);
    if (made.fd() < 0) return base::failed(base::errno_failure(temp, "open", made.open_error()));
  }
  sqlite3* db = nullptr;
  int rc = sqlite().sqlite3_open_v2(temp.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr);
  if (rc == SQLITE_OK) rc = execute(db, "BEGIN");
  if (rc == SQLITE_DONE) rc = execute(db, "PRAGMA application_id=" + std::to_string(kIndexApplicationId));
  if (rc == SQLITE_DONE) rc = execute(db, create_table_sql());
  for (const std::string_view column : kAddedColumns)
    if (rc == SQLITE_DONE) rc = execute(db, "ALTER TABLE entries ADD COLUMN " + std::string(column));
  if (rc == SQLITE_DONE) rc = execute(db, "COMMIT");
  const std::string problem = rc == SQLITE_DONE ? "" : (db != nullptr ? sqlite().sqlite3_errmsg(db) : "out of memory");
  if (sqlite().sqlite3_close(db) != SQLITE_OK && problem.empty()) {
    return failed({base::Failure::Kind::io, 0, temp + ": close: " + sqlite().sqlite3_errmsg(db)});
  }
  if (!problem.empty()) return failed({base::Failure::Kind::io, 0, temp + ": cannot create an index: " + problem});
  // Never over a file: RENAME_NOREPLACE, or link() where the file system lacks it.
  if (::renameat2(AT_FDCWD, temp.c_str(), AT_FDCWD, path.c_str(), RENAME_NOREPLACE) == 0) return {};
  int error = errno;
  if (error == EINVAL || error == ENOSYS) error = ::link(temp.c_str(), path.c_str()) == 0 ? 0 : errno;
  ::unlink(temp.c_str());
  // EEXIST: another process made one first; the caller judges what is there.
  if (error == 0 || error == EEXIST) return {};
  return base::failed(base::errno_failure(path, "rename", error));
}

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
  // Only a file kiln made is opened (index_identity.hpp): a missing one is
  // created whole, anything but a SQLite database is refused unopened.
  IndexFile found = inspect_index_file(path_);
  if (found.kind == IndexFile::Kind::absent) {
    if (const base::Result<void> made = create_index_file(path_); !made) return fail(made.error().message);
    found = inspect_index_file(path_);  // ours, or what another process put there first
  }
  if (found.kind == IndexFile::Kind::absent) return fail(path_.string() + ": removed as soon as it was made");
  if (found.kind == IndexFile::Kind::refused && found.error != 0) return fail(path_.string() + ": " + found.why);
  if (found.kind == IndexFile::Kind::refused) return refuse(found.why);
  // No SQLITE_OPEN_CREATE: the file is there, and judged.
  const int flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX;  // NOMUTEX: mutex_ guards the connection
  if (sqlite().sqlite3_open_v2(path_.c_str(), &db_, flags, nullptr) != SQLITE_OK) return sqlite_failed("open");
  sqlite().sqlite3_busy_timeout(db_, busy_timeout_ms);
  // Judged again through SQLite's own reading, before anything is written:
  // the file inspected may have been replaced since. The first statement reads
  // the header: a file that is not a database fails here, and is left in place
  // for open_or_rebuild_index() (which rebuilds only a file kiln made).
  int rc = SQLITE_OK;
  const std::int64_t id = application_id(db_, rc);
  if (rc != SQLITE_ROW) return sqlite_failed("application_id");
  bool stamped = false;
  if (id != kIndexApplicationId) {
    if (id != 0) return refuse("a SQLite database of another application");
    if (!has_kiln_schema(db_)) return refuse("a SQLite database without kiln's schema");
    // An earlier kiln's index: stamped, so that a journal appender, which
    // reads only the header, recognises it from now on.
    stamped = execute(db_, "PRAGMA application_id=" + std::to_string(kIndexApplicationId)) == SQLITE_DONE;
    base::log().log(stamped ? spdlog::level::info : spdlog::level::debug, "kiln cache index {}: {}", path_.string(),
                    stamped ? "made by an earlier kiln; stamped with kiln's application id"
                            : std::string("made by an earlier kiln; cannot stamp it yet: ") +
                                  sqlite().sqlite3_errmsg(db_));
  }
  constexpr std::string_view mode = "wal";  // readers run beside a writer
  if (!set_journal_mode(db_, mode, path_)) return sqlite_failed("journal_mode");
  if (execute(db_, "PRAGMA synchronous=NORMAL") != SQLITE_DONE) return sqlite_failed("synchronous");
  if (execute(db_, create_table_sql()) != SQLITE_DONE) return sqlite_failed("create table");
  add_columns();
  // The stamp into the file itself, where the header is read; a reader in the
  // way only delays it to a later checkpoint.
  if (stamped) execute(db_, "PRAGMA wal_checkpoint(PASSIVE)");
  return true;
}

// An index made before the added columns gets them. One that cannot be
// changed now (read-only, busy) stays usable without them: its rows then read
// with an empty kernel file and digest, and rows are written without them.
void Index::add_columns() {
  bool all = true;
  for (const std::string_view column : kAddedColumns) all = all && has_column(db_, column_name(column));
  if (!all) {
    if (const int rc = add_missing_columns(db_); rc != SQLITE_DONE) {
      base::log().info("kiln cache index {}: cannot add the kernel file columns yet: {}", path_.string(),
                       sqlite().sqlite3_errmsg(db_));
      return;
    }
  }
  kernel_files_ = true;
}

bool Index::refuse(const std::string& why) {
  refused_ = true;
  return fail(refusal_of_index(path_, why));
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
