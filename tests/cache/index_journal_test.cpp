#include "cache/index_journal.hpp"

#include <sys/file.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <map>
#include <vector>

#include <gtest/gtest.h>
#include <sqlite3.h>

#include "cache/disk_store.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/index.hpp"
#include "cache/index_rebuild.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;
using testing::note_hits;
using testing::record;

class IndexJournalTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path index_path() const { return temp.path() / "index.sqlite"; }
  fs::path journal() const { return journal_path(index_path()); }

  static std::map<std::string, int> count_by_key(const std::vector<Hit>& hits) {
    std::map<std::string, int> counts;
    for (const Hit& hit : hits) ++counts[hit.key.hex()];
    return counts;
  }
};

TEST_F(IndexJournalTest, SitsBesideTheIndex) { EXPECT_EQ(journal(), temp.path() / "index.sqlite.journal"); }

TEST_F(IndexJournalTest, AppendThenTakeGivesEveryHitAndEmptiesTheJournal) {
  const std::vector<Key> first = {key_of("a"), key_of("b")}, second = {key_of("a")};
  EXPECT_EQ(append_hits(journal(), first), 80u);  // 40 bytes a hit
  EXPECT_EQ(append_hits(journal(), second), 120u);
  EXPECT_EQ(testing::mode_of(journal()), 0600u);
  const TakenJournal taken = take_journal(journal());
  EXPECT_EQ(taken.skipped, 0u);
  ASSERT_EQ(taken.hits.size(), 3u);
  EXPECT_EQ(count_by_key(taken.hits), (std::map<std::string, int>{{key_of("a").hex(), 2}, {key_of("b").hex(), 1}}));
  EXPECT_GT(taken.hits[0].when, 1'600'000'000);
  EXPECT_EQ(fs::file_size(journal()), 0u);
  EXPECT_TRUE(take_journal(journal()).hits.empty());
}

TEST_F(IndexJournalTest, MissingJournalGivesNothing) {
  const TakenJournal taken = take_journal(journal());
  EXPECT_TRUE(taken.hits.empty());
  EXPECT_EQ(taken.skipped, 0u);
  EXPECT_FALSE(fs::exists(journal()));
}

TEST_F(IndexJournalTest, GarbledAndTornRecordsAreSkipped) {
  const std::vector<Key> keys = {key_of("a"), key_of("b"), key_of("c")};
  append_hits(journal(), keys);
  std::vector<char> bytes = testing::read_bytes(journal());
  bytes[40 + 10] ^= 0x10;                          // the second record's key
  bytes.insert(bytes.end(), {'t', 'o', 'r', 'n'});  // a cut write
  testing::write_bytes(journal(), bytes);
  const TakenJournal taken = take_journal(journal());
  EXPECT_EQ(taken.skipped, 2u);
  EXPECT_EQ(count_by_key(taken.hits), (std::map<std::string, int>{{key_of("a").hex(), 1}, {key_of("c").hex(), 1}}));
}

TEST_F(IndexJournalTest, UnwritableFolderNotesNothingAndDoesNotThrow) {
  EXPECT_EQ(append_hits(temp.path() / "no" / "such" / "folder" / "index.sqlite.journal", std::vector<Key>{key_of("a")}),
            0u);
}

IndexRecord stored_row(std::string_view name, std::int64_t created = 0) {
  IndexRecord record;
  record.key = key_of(name);
  record.kernel = std::string(name);
  record.specialisation = R"({"n": 64, "note": "O'Brien; DROP TABLE entries"})";
  record.backend = "cpu";
  record.target = "x86_64-pc-linux-gnu znver4 +avx512f";
  record.size = 4955;
  record.compile_ms = 31.5;
  record.created = created;
  record.hits = 7;  // not carried: a stored entry starts with none
  return record;
}

TEST_F(IndexJournalTest, StoredRowsComeBackWhole) {
  append_stored(journal(), stored_row("a", 1'700'000'000));
  append_hits(journal(), std::vector<Key>{key_of("a")});
  append_stored(journal(), stored_row("b"));
  const TakenJournal taken = take_journal(journal());
  EXPECT_EQ(taken.skipped, 0u);
  ASSERT_EQ(taken.stored.size(), 2u);
  const IndexRecord& a = taken.stored[0];
  const IndexRecord want = stored_row("a");
  EXPECT_EQ(a.key, want.key);
  EXPECT_EQ(a.kernel, want.kernel);
  EXPECT_EQ(a.specialisation, want.specialisation);
  EXPECT_EQ(a.backend, want.backend);
  EXPECT_EQ(a.target, want.target);
  EXPECT_EQ(a.size, want.size);
  EXPECT_DOUBLE_EQ(a.compile_ms, want.compile_ms);
  EXPECT_EQ(a.created, 1'700'000'000);
  EXPECT_EQ(a.last_used, 1'700'000'000);
  EXPECT_EQ(a.hits, 0);
  EXPECT_GT(taken.stored[1].created, 1'700'000'000);  // stamped when appended
  EXPECT_EQ(taken.hits.size(), 1u);
}

// Issue 18: a user kernel's row keeps its kernel file and digest through the
// journal and into the index.
TEST_F(IndexJournalTest, AUserKernelsFileAndDigestComeThrough) {
  IndexRecord row = stored_row("user");
  row.kernel_file = "/home/me/kernels/smooth.kiln";
  row.kernel_digest = "0123456789abcdef0123456789abcdef";
  append_stored(journal(), row);
  const Index index(index_path());
  const std::optional<IndexRecord> found = index.find(row.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kernel_file, row.kernel_file);
  EXPECT_EQ(found->kernel_digest, row.kernel_digest);
}

// A record whose size field is garbled: nothing after it can be framed.
TEST_F(IndexJournalTest, AGarbledSizeEndsTheRead) {
  append_hits(journal(), std::vector<Key>{key_of("a")});
  append_stored(journal(), stored_row("b"));
  append_hits(journal(), std::vector<Key>{key_of("c")});
  std::vector<char> bytes = testing::read_bytes(journal());
  bytes[40] = static_cast<char>(0xff);  // the stored record's size: now larger than what follows
  bytes[43] = static_cast<char>(0x7f);
  testing::write_bytes(journal(), bytes);
  const TakenJournal taken = take_journal(journal());
  EXPECT_EQ(taken.skipped, 1u);
  ASSERT_EQ(taken.hits.size(), 1u);
  EXPECT_EQ(taken.hits[0].key, key_of("a"));
  EXPECT_TRUE(taken.stored.empty());
}

// Many processes append at once: no record is lost or interleaved.
TEST_F(IndexJournalTest, ConcurrentProcessesLoseNothing) {
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
    const TakenJournal taken = take_journal(journal());
    EXPECT_EQ(taken.skipped, 0u);
    all.insert(all.end(), taken.hits.begin(), taken.hits.end());
  }
  for (pid_t pid : children) {
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  }
  const TakenJournal rest = take_journal(journal());
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

TEST_F(IndexJournalTest, OpeningTheIndexFoldsStoredRowsThenHits) {
  { Index index(index_path()); }  // exists, empty
  append_hits(journal(), std::vector<Key>{key_of("x")});  // before its row: the row comes first when folded
  append_stored(journal(), stored_row("x", 1'600'000'000));
  append_hits(journal(), std::vector<Hit>{{key_of("x"), 1'650'000'000}});
  Index index(index_path());
  const std::optional<IndexRecord> x = index.find(key_of("x"));
  ASSERT_TRUE(x.has_value());
  EXPECT_EQ(x->kernel, "x");
  EXPECT_EQ(x->size, 4955u);
  EXPECT_EQ(x->created, 1'600'000'000);
  EXPECT_EQ(x->hits, 2);
  EXPECT_GE(x->last_used, 1'650'000'000);
  EXPECT_EQ(fs::file_size(journal()), 0u);
}

TEST_F(IndexJournalTest, OpeningTheIndexFoldsTheJournalIn) {
  {
    Index index(index_path());
    record(index, record_for("a"));
    record(index, record_for("b"));
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

// Hundreds of processes' hits of the same few kernels, in any order: each
// key's count and latest use come out exact (the fold updates once per key).
TEST_F(IndexJournalTest, ManyHitsOfFewKeysFoldIntoTheirCountsAndLatestUse) {
  const std::vector<std::string> names{"p", "q", "r"};
  {
    Index index(index_path());
    for (const std::string& name : names) record(index, record_for(name));
  }
  std::vector<Hit> hits;
  std::map<std::string, std::int64_t> latest;
  for (int i = 0; i < 2000; ++i) {
    const std::string& name = names[static_cast<std::size_t>(i * 7 % 3)];
    const std::int64_t when = 3'000'000'000 + (i * 7919) % 1000;  // not in order
    hits.push_back({key_of(name), when});
    latest[name] = std::max(latest[name], when);
  }
  append_hits(journal(), hits);
  const std::map<std::string, int> expected = count_by_key(hits);
  Index index(index_path());
  ASSERT_TRUE(index.usable()) << index.problem();
  for (const std::string& name : names) {
    const std::optional<IndexRecord> row = index.find(key_of(name));
    ASSERT_TRUE(row.has_value()) << name;
    EXPECT_EQ(row->hits, expected.at(key_of(name).hex())) << name;
    EXPECT_EQ(row->last_used, latest.at(name)) << name;
  }
}

// A missing index is filled from the entries, and what its journal brought
// (the hits of processes that ran meanwhile) is kept, not reset.
TEST_F(IndexJournalTest, FillingAMissingIndexKeepsTheJournalsHits) {
  const DiskStore store(temp.path() / "cache");
  const IndexRecord row = stored_row("filled");
  const std::vector<char> payload(100, 'x');
  ASSERT_TRUE(store.put(row.key, payload, encode_metadata(row)).has_value());
  const fs::path index_file = temp.path() / "cache" / "index.sqlite";
  append_hits(journal_path(index_file), std::vector<Key>{row.key, row.key});
  const std::unique_ptr<Index> index = open_or_rebuild_index(index_file, store);
  const std::optional<IndexRecord> found = index->find(row.key);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->kernel, "filled");
  EXPECT_EQ(found->hits, 2);
}

// The index is locked by another process: the hits taken from the journal go back.
TEST_F(IndexJournalTest, HitsGoBackWhenTheIndexIsLocked) {
  { Index scratch(index_path()); record(scratch, record_for("a")); }
  append_hits(journal(), std::vector<Key>{key_of("a"), key_of("a"), key_of("a")});
  append_stored(journal(), stored_row("b"));
  sqlite3* holder = nullptr;
  ASSERT_EQ(sqlite3_open(index_path().c_str(), &holder), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(holder, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    const Index locked(index_path(), /*busy_timeout_ms=*/10);
    EXPECT_GE(fs::file_size(journal()), 3u * 40u);
  }
  sqlite3_exec(holder, "ROLLBACK", nullptr, nullptr, nullptr);
  sqlite3_close(holder);
  Index index(index_path());
  EXPECT_EQ(index.find(key_of("a"))->hits, 3);
  EXPECT_TRUE(index.find(key_of("b")).has_value());
}

}  // namespace
}  // namespace kiln::cache
