#include "cache/index.hpp"

#include <chrono>
#include <thread>

#include <gtest/gtest.h>

#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

using testing::key_of;
using testing::note_hits;
using testing::record;

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
}

IndexRecord record_for(std::string_view name) {
  IndexRecord record;
  record.key = key_of(name);
  record.kernel = std::string(name);
  record.specialisation = R"({"n": 1024, "note": "O'Brien; DROP TABLE entries"})";
  record.backend = "cpu";
  record.target = "x86_64-pc-linux-gnu znver4 +avx512f";
  record.size = 12345;
  record.compile_ms = 81.25;
  record.created = 1;  // ignored: record() sets the times and zeroes hits
  record.last_used = 2;
  record.hits = 99;
  return record;
}

class IndexTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path db_path() const { return temp.path() / "nested" / "index.sqlite"; }
};

TEST_F(IndexTest, OpensAndCreatesItsFolder) {
  Index index(db_path());
  ASSERT_TRUE(index.usable()) << index.problem();
  EXPECT_TRUE(index.problem().empty());
  EXPECT_TRUE(fs::exists(db_path()));
  EXPECT_EQ(testing::mode_of(db_path().parent_path()), 0700U);
}

TEST_F(IndexTest, RecordThenFind) {
  Index index(db_path());
  const std::int64_t before = unix_now();
  record(index, record_for("saxpy"));
  const std::int64_t after = unix_now();
  const std::optional<IndexRecord> found = index.find(key_of("saxpy"));
  ASSERT_TRUE(found.has_value());
  const IndexRecord expected = record_for("saxpy");
  EXPECT_EQ(found->key, expected.key);
  EXPECT_EQ(found->kernel, expected.kernel);
  EXPECT_EQ(found->specialisation, expected.specialisation);
  EXPECT_EQ(found->backend, expected.backend);
  EXPECT_EQ(found->target, expected.target);
  EXPECT_EQ(found->size, expected.size);
  EXPECT_EQ(found->compile_ms, expected.compile_ms);
  EXPECT_GE(found->created, before);
  EXPECT_LE(found->created, after);
  EXPECT_EQ(found->last_used, found->created);
  EXPECT_EQ(found->hits, 0);
}

TEST_F(IndexTest, FindUnknownKeyIsEmpty) {
  Index index(db_path());
  EXPECT_FALSE(index.find(key_of("nothing")).has_value());
}

TEST_F(IndexTest, TextWithNulBytesRoundTrips) {
  Index index(db_path());
  IndexRecord row = record_for("nul");
  row.target = std::string("a\0b", 3);
  record(index, row);
  EXPECT_EQ(index.find(row.key)->target, row.target);
}

TEST_F(IndexTest, RecordReplaces) {
  Index index(db_path());
  record(index, record_for("k"));
  const Key keys[] = {key_of("k")};
  note_hits(index, keys);
  IndexRecord changed = record_for("k");
  changed.size = 7;
  record(index, changed);
  ASSERT_EQ(index.list().size(), 1U);
  EXPECT_EQ(index.find(changed.key)->size, 7U);
  EXPECT_EQ(index.find(changed.key)->hits, 0);
}

TEST_F(IndexTest, ListReturnsEveryRecord) {
  Index index(db_path());
  for (const char* name : {"c", "a", "b"}) record(index, record_for(name));
  const std::vector<IndexRecord> records = index.list();
  ASSERT_EQ(records.size(), 3U);
  EXPECT_EQ(records[0].kernel, "a");  // ordered by kernel
  EXPECT_EQ(records[1].kernel, "b");
  EXPECT_EQ(records[2].kernel, "c");
}

TEST_F(IndexTest, NoteHitsCountsEachKeyGiven) {
  Index index(db_path());
  record(index, record_for("a"));
  record(index, record_for("b"));
  const Key hits[] = {key_of("a"), key_of("a"), key_of("b"), key_of("not recorded")};
  note_hits(index, hits);
  note_hits(index, std::span<const Key>());
  EXPECT_EQ(index.find(key_of("a"))->hits, 2);
  EXPECT_EQ(index.find(key_of("b"))->hits, 1);
  EXPECT_GE(index.find(key_of("a"))->last_used, index.find(key_of("a"))->created);
  EXPECT_EQ(index.list().size(), 2U) << "a hit must not create a record";
}

TEST_F(IndexTest, RemoveAndClear) {
  Index index(db_path());
  for (const char* name : {"a", "b", "c"}) record(index, record_for(name));
  index.remove(key_of("b"));
  index.remove(key_of("never there"));
  EXPECT_FALSE(index.find(key_of("b")).has_value());
  EXPECT_EQ(index.list().size(), 2U);
  index.clear();
  EXPECT_TRUE(index.list().empty());
}

TEST_F(IndexTest, PersistsAcrossConnections) {
  {
    Index index(db_path());
    record(index, record_for("kept"));
  }
  Index reopened(db_path());
  ASSERT_TRUE(reopened.usable()) << reopened.problem();
  EXPECT_TRUE(reopened.find(key_of("kept")).has_value());
}

TEST_F(IndexTest, TwoConnectionsSeeEachOther) {
  Index first(db_path());
  Index second(db_path());
  record(first, record_for("one"));
  record(second, record_for("two"));
  EXPECT_EQ(first.list().size(), 2U);
  EXPECT_EQ(second.list().size(), 2U);
}

TEST_F(IndexTest, ManyThreadsShareOneIndex) {
  Index index(db_path());
  record(index, record_for("shared"));
  const Key key[] = {key_of("shared")};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        note_hits(index, key);
        record(index, record_for("own " + std::to_string(t) + "/" + std::to_string(i)));
        EXPECT_TRUE(index.find(key[0]).has_value());
        index.list();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(index.find(key[0])->hits, 100);
  EXPECT_EQ(index.list().size(), 101U);
}

// restore() is the rebuild's bulk load: unlike record(), it keeps the
// times and hits it is given, and replaces a record under the same key.
TEST_F(IndexTest, RestoreKeepsTimesAndHits) {
  Index index(db_path());
  record(index, record_for("a"));
  std::vector<IndexRecord> records = {record_for("a"), record_for("b")};
  records[0].kernel = "a, restored";
  ASSERT_TRUE(index.restore(records));
  const auto a = index.find(key_of("a"));
  const auto b = index.find(key_of("b"));
  ASSERT_TRUE(a && b);
  EXPECT_EQ(a->kernel, "a, restored");
  EXPECT_EQ(b->created, 1);
  EXPECT_EQ(b->last_used, 2);
  EXPECT_EQ(b->hits, 99);
  EXPECT_EQ(b->size, 12345U);
  EXPECT_EQ(b->specialisation, records[1].specialisation);
  EXPECT_EQ(index.list().size(), 2U);
  EXPECT_TRUE(index.restore({}));
}

}  // namespace
}  // namespace kiln::cache
