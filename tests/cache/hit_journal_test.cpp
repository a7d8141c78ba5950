#include "cache/hit_journal.hpp"

#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <map>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "cache/index.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;

class HitJournalTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path index_path() const { return temp.path() / "index.sqlite"; }
  fs::path journal() const { return hit_journal_path(index_path()); }

  static std::map<std::string, int> count_by_key(const std::vector<Hit>& hits) {
    std::map<std::string, int> counts;
    for (const Hit& hit : hits) ++counts[hit.key.hex()];
    return counts;
  }
};

TEST_F(HitJournalTest, SitsBesideTheIndex) { EXPECT_EQ(journal(), temp.path() / "index.sqlite.hits"); }

TEST_F(HitJournalTest, AppendThenTakeGivesEveryHitAndEmptiesTheJournal) {
  const std::vector<Key> first = {key_of("a"), key_of("b")}, second = {key_of("a")};
  EXPECT_EQ(append_hits(journal(), first), 64u);
  EXPECT_EQ(append_hits(journal(), second), 96u);
  EXPECT_EQ(testing::mode_of(journal()), 0600u);
  const TakenHits taken = take_hits(journal());
  EXPECT_EQ(taken.skipped, 0u);
  ASSERT_EQ(taken.hits.size(), 3u);
  EXPECT_EQ(count_by_key(taken.hits), (std::map<std::string, int>{{key_of("a").hex(), 2}, {key_of("b").hex(), 1}}));
  EXPECT_GT(taken.hits[0].when, 1'600'000'000);
  EXPECT_EQ(fs::file_size(journal()), 0u);
  EXPECT_TRUE(take_hits(journal()).hits.empty());
}

TEST_F(HitJournalTest, MissingJournalGivesNothing) {
  const TakenHits taken = take_hits(journal());
  EXPECT_TRUE(taken.hits.empty());
  EXPECT_EQ(taken.skipped, 0u);
  EXPECT_FALSE(fs::exists(journal()));
}

TEST_F(HitJournalTest, GarbledAndTornRecordsAreSkipped) {
  const std::vector<Key> keys = {key_of("a"), key_of("b"), key_of("c")};
  append_hits(journal(), keys);
  std::vector<char> bytes = testing::read_bytes(journal());
  bytes[32 + 5] ^= 0x10;                           // the second record's key
  bytes.insert(bytes.end(), {'t', 'o', 'r', 'n'});  // a cut write
  testing::write_bytes(journal(), bytes);
  const TakenHits taken = take_hits(journal());
  EXPECT_EQ(taken.skipped, 2u);
  EXPECT_EQ(count_by_key(taken.hits), (std::map<std::string, int>{{key_of("a").hex(), 1}, {key_of("c").hex(), 1}}));
}

TEST_F(HitJournalTest, UnwritableFolderNotesNothingAndDoesNotThrow) {
  EXPECT_EQ(append_hits(temp.path() / "no" / "such" / "folder" / "index.sqlite.hits", std::vector<Key>{key_of("a")}),
            0u);
}

// Many processes append at once: no record is lost or interleaved.
TEST_F(HitJournalTest, ConcurrentProcessesLoseNothing) {
  constexpr int kProcesses = 8, kRounds = 50;
  std::vector<pid_t> children;
  for (int p = 0; p < kProcesses; ++p) {
    const pid_t pid = ::fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      const std::vector<Key> keys = {key_of("p" + std::to_string(p)), key_of("shared")};
      for (int r = 0; r < kRounds; ++r) append_hits(journal(), keys);
      ::_exit(0);
    }
    children.push_back(pid);
  }
  // Taken while they append: what one take misses, the next one gets.
  std::vector<Hit> all;
  for (int i = 0; i < 20; ++i) {
    const TakenHits taken = take_hits(journal());
    EXPECT_EQ(taken.skipped, 0u);
    all.insert(all.end(), taken.hits.begin(), taken.hits.end());
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const TakenHits rest = take_hits(journal());
  all.insert(all.end(), rest.hits.begin(), rest.hits.end());
  const auto counts = count_by_key(all);
  EXPECT_EQ(all.size(), static_cast<std::size_t>(2 * kProcesses * kRounds));
  EXPECT_EQ(counts.at(key_of("shared").hex()), kProcesses * kRounds);
  for (int p = 0; p < kProcesses; ++p) EXPECT_EQ(counts.at(key_of("p" + std::to_string(p)).hex()), kRounds) << p;
}

IndexRecord record_for(std::string_view name) {
  IndexRecord record;
  record.key = key_of(name);
  record.kernel = std::string(name);
  record.backend = "cpu";
  return record;
}

TEST_F(HitJournalTest, OpeningTheIndexFoldsTheJournalIn) {
  {
    Index index(index_path());
    index.record(record_for("a"));
    index.record(record_for("b"));
  }
  append_hits(journal(), std::vector<Key>{key_of("a"), key_of("a"), key_of("b"), key_of("unknown")});
  append_hits(journal(), std::vector<Hit>{{key_of("b"), 4'000'000'000}});  // a later last use
  Index index(index_path());
  ASSERT_TRUE(index.usable()) << index.problem();
  EXPECT_EQ(index.find(key_of("a"))->hits, 2);
  EXPECT_EQ(index.find(key_of("b"))->hits, 2);
  EXPECT_EQ(index.find(key_of("b"))->last_used, 4'000'000'000);
  EXPECT_FALSE(index.find(key_of("unknown")).has_value());
  EXPECT_EQ(fs::file_size(journal()), 0u);
  // Folded once: a second opening adds nothing.
  EXPECT_EQ(Index(index_path()).find(key_of("a"))->hits, 2);
}

// The index is locked by another process: the hits taken from the journal go back.
TEST_F(HitJournalTest, HitsGoBackWhenTheIndexIsLocked) {
  { Index(index_path()).record(record_for("a")); }
  append_hits(journal(), std::vector<Key>{key_of("a"), key_of("a"), key_of("a")});
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(index_path().c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    const Index locked(index_path(), /*busy_timeout_ms=*/10);
    EXPECT_EQ(fs::file_size(journal()), 3u * 32u);
  }
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  EXPECT_EQ(Index(index_path()).find(key_of("a"))->hits, 3);
}

}  // namespace
}  // namespace kiln::cache
