// KILN_INDEX_PATH at a file kiln did not make: whatever it is (a text file, a
// FIFO, an empty file, another program's SQLite database), kiln refuses it,
// names it, and leaves it and its folder as they were: no rebuild, no
// -wal or -shm, no journal beside it. kiln's own index is stamped with its
// application id when made, and an earlier kiln's (none) is recognised by
// its exact schema and stamped.
#include "cache/index_identity.hpp"

#include <sqlite3.h>
#include <sys/stat.h>

#include <algorithm>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "cache/index.hpp"
#include "cache/index_journal.hpp"
#include "cache/index_rebuild.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;
using testing::record;

constexpr const char* kLegacySchema =
    "CREATE TABLE IF NOT EXISTS entries (key TEXT PRIMARY KEY, kernel TEXT, specialisation TEXT, backend TEXT, "
    "target TEXT, size INTEGER, compile_ms REAL, created INTEGER, last_used INTEGER, hits INTEGER)";

// Runs `sql` on a database made with SQLite directly, as another program (or
// an earlier kiln) would; `wal` leaves it in WAL mode, as kiln used it.
void make_database(const fs::path& path, const std::string& sql, bool wal = false) {
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  if (wal) {
    ASSERT_EQ(sqlite3_exec(db, "PRAGMA journal_mode=WAL", nullptr, nullptr, nullptr), SQLITE_OK);
  }
  ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  ASSERT_EQ(sqlite3_close(db), SQLITE_OK);
}

// The application id in a file's SQLite header, read as bytes.
std::uint32_t application_id_of(const fs::path& path) {
  const std::vector<char> bytes = testing::read_bytes(path);
  if (bytes.size() < 100) return 0;
  std::uint32_t id = 0;
  for (int i = 68; i < 72; ++i) id = id << 8 | static_cast<unsigned char>(bytes[static_cast<std::size_t>(i)]);
  return id;
}

// The names in `folder`, to see that nothing was made beside a refused file.
std::set<std::string> names_in(const fs::path& folder) {
  std::set<std::string> names;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename());
  return names;
}

class IndexIdentityTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path folder = temp.path() / "home";
  fs::path path = folder / "index.sqlite";
  DiskStore store{temp.path() / "cache"};
  testing::LogCapture log;

  void SetUp() override {
    fs::create_directories(folder);
    ASSERT_TRUE(store.put(key_of("an entry"), testing::bytes_of("payload")).has_value());
  }

  // Every way kiln could touch the file at `path`: open it, open it as a
  // Runtime does (rebuild when corrupt), rebuild it, note hits and a stored
  // row beside it. It refuses each, naming the path; the file and its
  // folder stay as they were.
  void expect_refused_and_untouched(const std::string& why) {
    const std::set<std::string> before = names_in(folder);
    struct stat info {};
    ASSERT_EQ(::lstat(path.c_str(), &info), 0);
    const bool regular = S_ISREG(info.st_mode);
    const std::vector<char> bytes = regular ? testing::read_bytes(path) : std::vector<char>{};
    const auto same = [&](const char* step) {
      EXPECT_EQ(names_in(folder), before) << step << ": something was made or removed beside " << path;
      struct stat now {};
      ASSERT_EQ(::lstat(path.c_str(), &now), 0) << step;
      EXPECT_EQ(now.st_ino, info.st_ino) << step << ": replaced";
      if (regular) {
        EXPECT_EQ(testing::read_bytes(path), bytes) << step << ": changed";
      }
    };

    {
      Index index(path);
      EXPECT_FALSE(index.usable());
      EXPECT_TRUE(index.refused());
      EXPECT_FALSE(index.corrupt()) << "a rebuild must not answer it";
      EXPECT_NE(index.problem().find(path.string() + ": " + why), std::string::npos) << index.problem();
      EXPECT_NE(index.problem().find("leaves this file untouched"), std::string::npos) << index.problem();
    }
    same("Index");
    {
      const std::unique_ptr<Index> index = open_or_rebuild_index(path, store);
      EXPECT_TRUE(index->refused());
      EXPECT_EQ(log.text().find("rebuilt"), std::string::npos) << log.text();
    }
    same("open_or_rebuild_index");
    const base::Result<RebuildResult> rebuilt = rebuild_index(path, store);
    ASSERT_FALSE(rebuilt.has_value());
    EXPECT_EQ(rebuilt.error().kind, base::Failure::Kind::invalid);
    EXPECT_NE(rebuilt.error().message.find(path.string()), std::string::npos) << rebuilt.error().message;
    same("rebuild_index");
    const std::vector<Key> hits = {key_of("an entry")};
    EXPECT_EQ(append_hits(journal_path(path), hits), 0u);
    IndexRecord row;
    row.key = key_of("an entry");
    EXPECT_EQ(append_stored(journal_path(path), row), 0u);
    same("the journal");
    EXPECT_NE(log.text().find("nothing noted in a journal: " + path.string()), std::string::npos) << log.text();
    const base::Result<void> claimed = claim_index_path(path);
    ASSERT_FALSE(claimed.has_value());
    EXPECT_NE(claimed.error().message.find(why), std::string::npos) << claimed.error().message;
  }
};

TEST_F(IndexIdentityTest, ATextFileIsRefused) {
  testing::write_bytes(path, std::string_view("export PATH=$HOME/bin:$PATH\nalias ll='ls -l'\n"));
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::refused);
  expect_refused_and_untouched("not a SQLite database");
}

TEST_F(IndexIdentityTest, AnEmptyFileIsRefused) {
  testing::write_bytes(path, std::string_view(""));
  expect_refused_and_untouched("an empty file");
}

// Opened without blocking: a FIFO is refused at once, not waited on.
TEST_F(IndexIdentityTest, AFifoIsRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo(path.c_str(), 0600), 0);
  expect_refused_and_untouched("a FIFO");
}

TEST_F(IndexIdentityTest, AFolderIsRefused) {
  fs::create_directory(path);
  expect_refused_and_untouched("a folder");
}

TEST_F(IndexIdentityTest, ALinkToNothingIsRefused) {
  fs::create_symlink(folder / "nowhere", path);
  expect_refused_and_untouched("a symbolic link to nothing");
}

TEST_F(IndexIdentityTest, AnotherProgramsDatabaseIsRefused) {
  make_database(path, "PRAGMA application_id=1234; CREATE TABLE notes (text TEXT); INSERT INTO notes VALUES ('mine')");
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::refused);
  expect_refused_and_untouched("a SQLite database of another application (application id 0x000004d2)");
}

// No application id, so only the schema can tell, and it is not kiln's.
TEST_F(IndexIdentityTest, AnUnstampedDatabaseOfAnotherSchemaIsRefused) {
  make_database(path, "CREATE TABLE entries (key TEXT PRIMARY KEY, value TEXT)");
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::unstamped);
  expect_refused_and_untouched("a SQLite database without kiln's schema");
}

// kiln's schema plus a table of someone else's: not exactly kiln's.
TEST_F(IndexIdentityTest, AnUnstampedDatabaseWithMoreThanKilnsSchemaIsRefused) {
  make_database(path, std::string(kLegacySchema) + "; CREATE TABLE notes (text TEXT)");
  expect_refused_and_untouched("a SQLite database without kiln's schema");
}

TEST_F(IndexIdentityTest, ANewIndexCarriesKilnsApplicationId) {
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::absent);
  {
    Index index(path);
    ASSERT_TRUE(index.usable()) << index.problem();
    EXPECT_FALSE(index.refused());
  }
  EXPECT_EQ(application_id_of(path), static_cast<std::uint32_t>(kIndexApplicationId));
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::kiln);
  // Made beside and moved into place: no temporary is left.
  for (const std::string& name : names_in(folder)) EXPECT_EQ(name.find(".new."), std::string::npos) << name;
}

// An index of an earlier kiln (WAL mode, kiln's table, no application id):
// recognised by its schema, opened with its rows, and stamped in the file's
// own header, where a journal appender looks.
TEST_F(IndexIdentityTest, AnEarlierKilnsIndexIsRecognisedAndStamped) {
  make_database(path,
                std::string(kLegacySchema) +
                    "; INSERT INTO entries VALUES ('" + key_of("old").hex() + "', 'old', '{}', 'cpu', 't', 1, 2.0, 3, 4, 5)",
                /*wal=*/true);
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::unstamped);
  {
    Index index(path);
    ASSERT_TRUE(index.usable()) << index.problem();
    const std::optional<IndexRecord> old = index.find(key_of("old"));
    ASSERT_TRUE(old.has_value());
    EXPECT_EQ(old->hits, 5);
  }
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::kiln);
  EXPECT_NE(log.text().find("made by an earlier kiln; stamped"), std::string::npos) << log.text();
}

// The SQL of the entries table, as sqlite_master holds it.
std::string table_sql_of(const fs::path& path) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  sqlite3_stmt* select = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, "SELECT sql FROM sqlite_master WHERE name = 'entries'", -1, &select, nullptr),
            SQLITE_OK);
  std::string sql;
  if (sqlite3_step(select) == SQLITE_ROW) sql = reinterpret_cast<const char*>(sqlite3_column_text(select, 0));
  sqlite3_finalize(select);
  sqlite3_close(db);
  return sql;
}

const std::string kAddedColumns = ", kernel_file TEXT NOT NULL DEFAULT '', kernel_digest TEXT NOT NULL DEFAULT '')";

// Issue 18: an index made before the kernel file columns gets them when it
// is opened, keeps its rows (their kernel file and digest empty) and takes
// rows that carry them; an earlier kiln's INSERT, which names its columns,
// still works on it, and the migrated schema is still recognised as kiln's.
TEST_F(IndexIdentityTest, AnEarlierKilnsIndexGetsTheKernelFileColumns) {
  make_database(path,
                std::string(kLegacySchema) +
                    "; INSERT INTO entries VALUES ('" + key_of("old").hex() + "', 'old', '{}', 'cpu', 't', 1, 2.0, 3, 4, 5)",
                /*wal=*/true);
  IndexRecord user;
  user.key = key_of("user");
  user.kernel = "smooth";
  user.kernel_file = "/home/me/kernels/smooth.kiln";
  user.kernel_digest = "0123456789abcdef0123456789abcdef";
  {
    Index index(path);
    ASSERT_TRUE(index.usable()) << index.problem();
    const std::optional<IndexRecord> old = index.find(key_of("old"));
    ASSERT_TRUE(old.has_value());
    EXPECT_EQ(old->hits, 5);
    EXPECT_EQ(old->kernel_file, "");
    EXPECT_EQ(old->kernel_digest, "");
    record(index, user);
  }
  const std::string migrated = table_sql_of(path);
  EXPECT_NE(migrated.find(kAddedColumns), std::string::npos) << migrated;
  // An earlier kiln writes a row as it always did.
  make_database(path, "INSERT INTO entries (key, kernel, specialisation, backend, target, size, compile_ms, created, "
                      "last_used, hits) VALUES ('" + key_of("later").hex() + "', 'later', '{}', 'cpu', 't', 1, 2.0, 3, 4, 0)");
  Index index(path);
  ASSERT_TRUE(index.usable()) << index.problem();
  const std::optional<IndexRecord> found = index.find(key_of("user"));
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kernel_file, user.kernel_file);
  EXPECT_EQ(found->kernel_digest, user.kernel_digest);
  EXPECT_EQ(index.list().size(), 3u);
  EXPECT_EQ(table_sql_of(path), migrated) << "migrated once";
}

// A new index has the same schema as a migrated one; an unstamped database
// with the migrated schema is still recognised as an earlier kiln's.
TEST_F(IndexIdentityTest, NewAndMigratedIndexesShareOneSchema) {
  { Index index(path); }
  const std::string made = table_sql_of(path);
  EXPECT_EQ(made.substr(made.size() - kAddedColumns.size()), kAddedColumns) << made;
  const fs::path legacy = folder / "legacy.sqlite";
  make_database(legacy, kLegacySchema, /*wal=*/true);
  { Index index(legacy); }
  EXPECT_EQ(table_sql_of(legacy), made);
  const fs::path unstamped = folder / "unstamped.sqlite";
  make_database(unstamped, "CREATE TABLE entries " + made.substr(made.find('(')), /*wal=*/true);
  Index index(unstamped);
  EXPECT_TRUE(index.usable()) << index.problem();
  EXPECT_EQ(inspect_index_file(unstamped).kind, IndexFile::Kind::kiln);
}

// An older index that cannot be migrated now (another process holds the
// write lock) is still read; the columns come at a later open.
TEST_F(IndexIdentityTest, AnIndexThatCannotBeMigratedYetIsStillRead) {
  make_database(path,
                "PRAGMA application_id=" + std::to_string(kIndexApplicationId) + "; " + kLegacySchema +
                    "; INSERT INTO entries VALUES ('" + key_of("old").hex() + "', 'old', '{}', 'cpu', 't', 1, 2.0, 3, 4, 5)",
                /*wal=*/true);
  sqlite3* writer = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &writer), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(writer, "BEGIN IMMEDIATE", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    Index index(path, 10);
    ASSERT_TRUE(index.usable()) << index.problem();
    const std::vector<IndexRecord> rows = index.list();
    ASSERT_EQ(rows.size(), 1u);
    EXPECT_EQ(rows[0].kernel, "old");
    EXPECT_EQ(rows[0].kernel_file, "");
  }
  EXPECT_EQ(table_sql_of(path).find("kernel_file"), std::string::npos);
  ASSERT_EQ(sqlite3_exec(writer, "COMMIT", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(writer);
  { Index index(path); }
  EXPECT_NE(table_sql_of(path).find(kAddedColumns), std::string::npos);
}

// A journal appender recognises an earlier kiln's index too (opening it once
// to stamp it), and appends; beside a missing index it appends at once.
TEST_F(IndexIdentityTest, TheJournalGoesBesideKilnsIndexOrWhereThereIsNone) {
  const std::vector<Key> hits = {key_of("an entry")};
  EXPECT_EQ(append_hits(journal_path(path), hits), 40u) << "no index yet: kiln will make it";
  fs::remove(journal_path(path));
  make_database(path, kLegacySchema, /*wal=*/true);
  EXPECT_EQ(append_hits(journal_path(path), hits), 40u) << log.text();
  EXPECT_EQ(inspect_index_file(path).kind, IndexFile::Kind::kiln);
  EXPECT_EQ(append_hits(journal_path(path), hits), 80u);
}

// A corrupt index of kiln's still carries kiln's header: it is rebuilt.
TEST_F(IndexIdentityTest, KilnsCorruptIndexIsStillRebuilt) {
  {
    Index index(path);
    for (int i = 0; i < 100; ++i) {
      IndexRecord row;
      row.key = key_of("row " + std::to_string(i));
      record(index, row);
    }
  }
  std::vector<char> bytes = testing::read_bytes(path);
  ASSERT_GT(bytes.size(), 4096u);
  std::fill(bytes.begin() + 100, bytes.end(), '\xff');  // the header stays
  testing::write_bytes(path, bytes);
  const std::unique_ptr<Index> index = open_or_rebuild_index(path, store);
  ASSERT_TRUE(index->usable()) << index->problem();
  EXPECT_EQ(index->list().size(), 1u) << "the store's one entry";
  EXPECT_NE(log.text().find("rebuilt from the entries"), std::string::npos) << log.text();
}

// Processes and threads that find no index make one each, beside it, and
// move it into place only where nothing is: all end up with the same one.
TEST_F(IndexIdentityTest, ManyMakersAtOnceShareOneIndex) {
  constexpr int kMakers = 8;
  std::vector<std::thread> makers;
  std::vector<int> usable(kMakers, 0);
  for (int i = 0; i < kMakers; ++i) {
    makers.emplace_back([&, i] {
      Index index(path, 2000);
      usable[static_cast<std::size_t>(i)] = index.usable() ? 1 : 0;
      IndexRecord row;
      row.key = key_of("maker " + std::to_string(i));
      record(index, row);
    });
  }
  for (std::thread& maker : makers) maker.join();
  EXPECT_EQ(std::count(usable.begin(), usable.end(), 1), kMakers) << log.text();
  EXPECT_EQ(Index(path).list().size(), static_cast<std::size_t>(kMakers));
  for (const std::string& name : names_in(folder)) EXPECT_EQ(name.find(".new."), std::string::npos) << name;
}

}  // namespace
}  // namespace kiln::cache
