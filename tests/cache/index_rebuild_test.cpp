// Rebuilding the index from the entries: from nothing, over garbage, over a
// cut database; bad entries skipped; a locked or healthy index left alone.
#include "cache/index_rebuild.hpp"

#include <sqlite3.h>

#include <chrono>
#include <random>

#include <gtest/gtest.h>

#include "cache/entry_format.hpp"
#include "cache/entry_metadata.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::bytes_of;
using testing::failure_of;
using testing::key_of;
using testing::note_hits;
using testing::record;
using testing::value_of;

IndexRecord described(std::string_view name) {
  IndexRecord record;
  record.key = key_of(name);
  record.kernel = std::string(name);
  record.specialisation = R"({"n": 3})";
  record.backend = "cpu";
  record.target = "x86_64-pc-linux-gnu";
  record.compile_ms = 12.5;
  return record;
}

std::size_t count_of(const std::string& text, std::string_view what) {
  std::size_t count = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++count;
  return count;
}

class IndexRebuildTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  DiskStore store{temp.path() / "cache"};
  fs::path index_path() const { return temp.path() / "cache" / "index.sqlite"; }
  testing::LogCapture log;

  // An entry as the runtime stores it: the record's fields as metadata.
  void put_entry(std::string_view name, std::size_t payload_size = 100) {
    const std::vector<char> payload(payload_size, 'p');
    const base::Result<void> put = store.put(key_of(name), payload, encode_metadata(described(name)));
    ASSERT_TRUE(put.has_value()) << failure_of(put);
  }
  void put_entries(int count) {
    for (int i = 0; i < count; ++i) put_entry("kernel " + std::to_string(i), 100 + i);
  }
  // The kernels the index at index_path() lists, sorted.
  std::vector<std::string> indexed_kernels() const {
    std::vector<std::string> kernels;
    for (const IndexRecord& record : Index(index_path()).list()) kernels.push_back(record.kernel);
    return kernels;
  }
};

TEST_F(IndexRebuildTest, MissingIndexIsBuiltFromTheEntries) {
  put_entry("a", 10);
  put_entry("b", 20);
  const RebuildResult result = value_of(rebuild_index(index_path(), store));
  EXPECT_EQ(result.records, 2U);
  EXPECT_EQ(result.skipped, 0U);
  EXPECT_EQ(result.without_metadata, 0U);
  const auto b = Index(index_path()).find(key_of("b"));
  ASSERT_TRUE(b.has_value());
  EXPECT_EQ(b->kernel, "b");
  EXPECT_EQ(b->specialisation, described("b").specialisation);
  EXPECT_EQ(b->backend, "cpu");
  EXPECT_EQ(b->target, described("b").target);
  EXPECT_EQ(b->compile_ms, 12.5);
  EXPECT_EQ(b->size, 20U) << "the payload's size, not the file's";
  EXPECT_EQ(b->hits, 0);
  const auto mtime = std::chrono::file_clock::to_sys(fs::last_write_time(store.entry_path(key_of("b"))));
  const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(mtime.time_since_epoch()).count();
  EXPECT_EQ(b->created, seconds);
  EXPECT_EQ(b->last_used, seconds);
}

// Opening finds no index beside existing entries: it is filled from them,
// and a second opening (the index now there) leaves it as it is.
TEST_F(IndexRebuildTest, OpeningAMissingIndexFillsItFromTheEntries) {
  put_entries(3);
  {
    const std::unique_ptr<Index> index = open_or_rebuild_index(index_path(), store);
    ASSERT_TRUE(index->usable()) << index->problem();
    EXPECT_EQ(index->list().size(), 3U);
    index->remove(key_of("kernel 0"));
  }
  EXPECT_EQ(open_or_rebuild_index(index_path(), store)->list().size(), 2U);
}

TEST_F(IndexRebuildTest, EmptyStoreGivesAnEmptyIndex) {
  const RebuildResult result = value_of(rebuild_index(index_path(), store));
  EXPECT_EQ(result.records, 0U);
  EXPECT_TRUE(Index(index_path()).usable());
}

// Garbage at the index's path, and a garbage -wal beside it: kiln did not
// make them (index_identity.hpp), so neither is rebuilt, replayed or removed.
TEST_F(IndexRebuildTest, GarbageFileIsRefusedAndKept) {
  put_entries(3);
  std::mt19937 rng(5);
  std::string garbage(8192, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  const fs::path wal = index_path().string() + "-wal";
  testing::write_bytes(index_path(), garbage);
  testing::write_bytes(wal, garbage);
  const std::unique_ptr<Index> index = open_or_rebuild_index(index_path(), store);
  EXPECT_FALSE(index->usable());
  EXPECT_TRUE(index->refused());
  EXPECT_NE(index->problem().find(index_path().string() + ": not a SQLite database"), std::string::npos)
      << index->problem();
  EXPECT_EQ(log.text().find("rebuilt"), std::string::npos) << log.text();
  const std::vector<char> expected(garbage.begin(), garbage.end());
  EXPECT_EQ(testing::read_bytes(index_path()), expected);
  EXPECT_EQ(testing::read_bytes(wal), expected);
  EXPECT_FALSE(rebuild_index(index_path(), store).has_value()) << "reindex refuses it too";
  EXPECT_EQ(testing::read_bytes(index_path()), expected);
}

// A database cut at random lengths: SQLite finds the file shorter than its
// header says and reports it corrupt, and the rebuild restores every record.
TEST_F(IndexRebuildTest, TruncatedDatabaseIsRebuilt) {
  put_entries(50);
  ASSERT_EQ(value_of(rebuild_index(index_path(), store)).records, 50U);
  {
    Index index(index_path());
    for (int i = 0; i < 300; ++i) record(index, described("padding " + std::to_string(i)));  // several pages
  }
  const std::vector<char> whole = testing::read_bytes(index_path());
  ASSERT_GT(whole.size(), 4U * 4096);
  std::mt19937 rng(17);
  for (int round = 0; round < 5; ++round) {
    // Cuts at least a page, and keeps the header, which says kiln made it
    // (index_identity.hpp): a file cut shorter is no longer proven kiln's.
    const std::size_t keep = 100 + rng() % (whole.size() - 4096 - 100);
    testing::write_bytes(index_path(), std::vector<char>(whole.begin(), whole.begin() + static_cast<long>(keep)));
    const std::unique_ptr<Index> index = open_or_rebuild_index(index_path(), store);
    ASSERT_TRUE(index->usable()) << keep << ": " << index->problem();
    EXPECT_EQ(index->list().size(), 50U) << "cut at " << keep << ": only the entries' records come back";
  }
  EXPECT_EQ(count_of(log.text(), "rebuilt from the entries"), 5U) << log.text();
}

TEST_F(IndexRebuildTest, EntriesThatDoNotVerifyOrDecodeAreSkipped) {
  put_entries(2);
  const auto put_raw = [&](std::string_view name, std::string_view metadata) {
    ASSERT_TRUE(store.put(key_of(name), bytes_of("payload"), metadata).has_value());
  };
  put_raw("not json", "not json at all");
  put_raw("no kernel", R"({"specialisation":"{}","backend":"cpu","target":"t","compile_ms":1})");
  put_raw("no metadata", "");
  const std::vector<std::string> damaged = {"flipped metadata", "cut payload", "cut short", "bad magic",
                                            "older format"};
  for (const std::string& name : damaged) put_entry(name);
  const auto rewrite = [&](std::string_view name, const auto& change) {
    const fs::path path = store.entry_path(key_of(name));
    std::vector<char> bytes = testing::read_bytes(path);
    change(bytes);
    testing::write_bytes(path, bytes);
  };
  // The payload is 100 bytes, at the front; the metadata follows it, then the trailer.
  rewrite("flipped metadata", [](std::vector<char>& bytes) { bytes[100 + 3] ^= 0x10; });
  rewrite("cut payload", [](std::vector<char>& bytes) { bytes.erase(bytes.begin(), bytes.begin() + 10); });
  rewrite("bad magic", [](std::vector<char>& bytes) { bytes[bytes.size() - kTrailerSize + 1] ^= 0x10; });
  rewrite("older format", [](std::vector<char>& bytes) {
    const std::string older = testing::older_format_of(std::string_view(bytes.data(), bytes.size()));
    bytes.assign(older.begin(), older.end());
  });
  const fs::path cut = store.entry_path(key_of("cut short"));
  fs::resize_file(cut, fs::file_size(cut) - 10);

  const RebuildResult result = value_of(rebuild_index(index_path(), store));
  EXPECT_EQ(result.records, 3U);  // two good ones and the one without metadata
  EXPECT_EQ(result.without_metadata, 1U);
  EXPECT_EQ(result.skipped, 2U + damaged.size());
  Index index(index_path());
  EXPECT_TRUE(index.find(key_of("kernel 0")).has_value());
  const auto bare = index.find(key_of("no metadata"));
  ASSERT_TRUE(bare.has_value());
  EXPECT_EQ(bare->kernel, "");
  EXPECT_EQ(bare->size, 7U);
  std::vector<std::string> skipped_names = damaged;
  skipped_names.insert(skipped_names.end(), {"not json", "no kernel"});
  for (const std::string& skipped : skipped_names) {
    EXPECT_FALSE(index.find(key_of(skipped)).has_value()) << skipped;
    EXPECT_TRUE(fs::exists(store.entry_path(key_of(skipped)))) << skipped << ": the rebuild deletes no entry";
  }
  EXPECT_NE(log.text().find(std::string(describe(EntryError::unsupported_version))), std::string::npos)
      << "an older entry is said to be one, not bad magic: " << log.text();
}

// Another connection holds an exclusive lock: the open fails with "locked",
// which is not corruption, so nothing is deleted or rebuilt.
TEST_F(IndexRebuildTest, LockedDatabaseIsNotRebuilt) {
  put_entries(2);
  {
    Index index(index_path());
    record(index, described("only in the index"));
  }
  sqlite3* other = nullptr;
  ASSERT_EQ(sqlite3_open(index_path().c_str(), &other), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "PRAGMA journal_mode=DELETE", nullptr, nullptr, nullptr), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(other, "BEGIN EXCLUSIVE", nullptr, nullptr, nullptr), SQLITE_OK);
  {
    const std::unique_ptr<Index> index = open_or_rebuild_index(index_path(), store);
    EXPECT_FALSE(index->usable());
    EXPECT_FALSE(index->corrupt());
    EXPECT_NE(index->problem().find("locked"), std::string::npos) << index->problem();
  }
  EXPECT_EQ(sqlite3_exec(other, "ROLLBACK", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(other);
  EXPECT_EQ(log.text().find("rebuil"), std::string::npos) << log.text();
  EXPECT_EQ(indexed_kernels(), std::vector<std::string>{"only in the index"}) << "the old index is intact";
}

TEST_F(IndexRebuildTest, HealthyIndexIsKeptWithItsHits) {
  put_entries(2);
  ASSERT_TRUE(rebuild_index(index_path(), store).has_value());
  const Key hit[] = {key_of("kernel 1")};
  { Index scratch(index_path()); note_hits(scratch, hit); }
  const std::unique_ptr<Index> index = open_or_rebuild_index(index_path(), store);
  ASSERT_TRUE(index->usable()) << index->problem();
  EXPECT_EQ(index->find(hit[0])->hits, 1);
  EXPECT_EQ(log.text().find("rebuil"), std::string::npos) << log.text();
}

// reindex on a healthy index replaces it: the entries are the truth, so a
// record with no entry behind it goes.
TEST_F(IndexRebuildTest, RebuildDropsRecordsWithoutEntries) {
  put_entries(1);
  { Index scratch(index_path()); record(scratch, described("gone")); }
  const RebuildResult result = value_of(rebuild_index(index_path(), store));
  EXPECT_EQ(result.records, 1U);
  EXPECT_EQ(indexed_kernels(), std::vector<std::string>{"kernel 0"});
}

TEST_F(IndexRebuildTest, UnwritableIndexIsAProblemNotAThrow) {
  put_entries(1);
  const fs::path folder_in_the_way = temp.path() / "file";
  testing::write_bytes(folder_in_the_way, std::string_view("x"));
  const fs::path path = folder_in_the_way / "index.sqlite";  // its parent is a file
  base::Result<RebuildResult> result;
  ASSERT_NO_THROW(result = rebuild_index(path, store));
  ASSERT_FALSE(result.has_value());
  EXPECT_EQ(result.error().kind, base::Failure::Kind::io);
  EXPECT_NE(result.error().message.find(path.string()), std::string::npos) << result.error().message;
}

}  // namespace
}  // namespace kiln::cache
