// An index that cannot work must say why, do nothing, and never throw or
// crash: it is a catalogue, and a load never fails because of it.
#include <sqlite3.h>

#include <random>

#include <gtest/gtest.h>

#include "cache/index.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;
using testing::note_hits;
using testing::record;

IndexRecord record_for(std::string_view name) {
  IndexRecord record;
  record.key = key_of(name);
  record.kernel = std::string(name);
  return record;
}

// Every method, on an index that is expected to be unusable.
void expect_inert(Index& index) {
  const Key keys[] = {key_of("a")};
  record(index, record_for("a"));
  note_hits(index, keys);
  index.remove(keys[0]);
  index.clear();
  EXPECT_TRUE(index.list().empty());
  EXPECT_FALSE(index.find(keys[0]).has_value());
}

class IndexFailureTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path db_path() const { return temp.path() / "index.sqlite"; }
  testing::LogCapture log;
};

TEST_F(IndexFailureTest, FolderWhereTheFileShouldBe) {
  fs::create_directories(db_path());
  Index index(db_path());
  EXPECT_FALSE(index.usable());
  EXPECT_FALSE(index.corrupt()) << "a folder is not a corrupt database: a rebuild would not help";
  EXPECT_NE(index.problem().find(db_path().string()), std::string::npos) << index.problem();
  EXPECT_NE(log.text().find(db_path().string()), std::string::npos) << "not logged: " << log.text();
  expect_inert(index);
}

TEST_F(IndexFailureTest, ParentIsAFile) {
  testing::write_bytes(temp.path() / "file", std::string_view("x"));
  const fs::path path = temp.path() / "file" / "index.sqlite";
  Index index(path);
  EXPECT_FALSE(index.usable());
  EXPECT_NE(index.problem().find(path.string()), std::string::npos) << index.problem();
  expect_inert(index);
}

// Not kiln's (index_identity.hpp): refused, not corrupt, so never rebuilt.
TEST_F(IndexFailureTest, GarbageFileIsUnusableAndKept) {
  std::mt19937 rng(99);
  std::string garbage(8192, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  testing::write_bytes(db_path(), garbage);
  Index index(db_path());
  EXPECT_FALSE(index.usable());
  EXPECT_TRUE(index.refused());
  EXPECT_FALSE(index.corrupt()) << "not kiln's: a rebuild must not replace it";
  EXPECT_NE(index.problem().find(db_path().string()), std::string::npos) << index.problem();
  expect_inert(index);
  EXPECT_EQ(testing::read_bytes(db_path()), std::vector<char>(garbage.begin(), garbage.end())) << "left untouched";
}

// A real SQLite header over a broken first page (the schema's root): SQLite
// gets past the header and finds the damage when it reads the schema.
TEST_F(IndexFailureTest, DamagedSchemaPageIsUnusable) {
  {
    Index index(db_path());
    ASSERT_TRUE(index.usable()) << index.problem();
    record(index, record_for("a"));
  }  // the last connection's close folds the WAL into the file
  std::vector<char> bytes = testing::read_bytes(db_path());
  ASSERT_GE(bytes.size(), 4096U);
  std::fill(bytes.begin() + 100, bytes.begin() + 4096, '\xff');
  testing::write_bytes(db_path(), bytes);
  Index index(db_path());
  EXPECT_FALSE(index.usable());
  EXPECT_TRUE(index.corrupt());
  EXPECT_NE(index.problem().find(db_path().string()), std::string::npos) << index.problem();
  expect_inert(index);
}

// Damage found after a good open (the constructor reads only page 1, the
// schema; the table's pages come later) turns the index off too.
TEST_F(IndexFailureTest, CorruptionFoundLaterTurnsTheIndexOff) {
  {
    Index index(db_path());
    for (int i = 0; i < 200; ++i) record(index, record_for("kernel number " + std::to_string(i)));
  }
  Index index(db_path());
  ASSERT_TRUE(index.usable()) << index.problem();
  EXPECT_FALSE(index.corrupt());
  std::vector<char> bytes = testing::read_bytes(db_path());
  ASSERT_GT(bytes.size(), 4096U * 2);
  std::fill(bytes.begin() + 4096, bytes.end(), '\xff');
  testing::write_bytes(db_path(), bytes);
  EXPECT_TRUE(index.list().empty());
  EXPECT_FALSE(index.usable());
  EXPECT_TRUE(index.corrupt());
  EXPECT_NE(index.problem().find(db_path().string()), std::string::npos) << index.problem();
  EXPECT_NE(log.text().find("corrupt"), std::string::npos) << log.text();
  expect_inert(index);
}

// Another connection holds the write lock: record() waits up to the busy
// timeout, logs, and returns without writing (no timing is asserted).
TEST_F(IndexFailureTest, LockedDatabase) {
  Index index(db_path(), 50);
  ASSERT_TRUE(index.usable()) << index.problem();
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  record(index, record_for("blocked"));
  const Key keys[] = {key_of("blocked")};
  note_hits(index, keys);
  EXPECT_NE(log.text().find("locked"), std::string::npos) << "busy not logged: " << log.text();
  EXPECT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  EXPECT_TRUE(index.usable()) << "busy is not corruption";
  EXPECT_FALSE(index.corrupt());
  EXPECT_FALSE(index.find(key_of("blocked")).has_value());
  record(index, record_for("after"));
  EXPECT_TRUE(index.find(key_of("after")).has_value());
}

}  // namespace
}  // namespace kiln::cache
