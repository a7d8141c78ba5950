// gc(), verify() and DiskStore::sweep_temporaries(): what goes, in which
// order, and that readers in flight never see a bad entry.
#include "cache/eviction.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <thread>

#include <gtest/gtest.h>

#include "cache/atomic_file.hpp"
#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;
using std::chrono::hours;
using std::chrono::seconds;
using std::chrono::sys_seconds;

using testing::key_of;
using testing::read_bytes;
using testing::value_of;
using testing::write_bytes;

// A fixed, whole-second point in the past: mtimes and recency compare exactly.
const sys_seconds kThen{seconds(1'700'000'000)};

class EvictionTest : public ::testing::Test {
 protected:
  testing::TempFolder temp;
  fs::path dir() const { return temp.path() / "cache"; }
  DiskStore store{dir()};

  // Stores `name` with a payload of `size` bytes, its file last modified at `modified`.
  Key put(const std::string& name, std::size_t size, sys_seconds modified) {
    const Key key = key_of(name);
    EXPECT_TRUE(store.put(key, std::vector<char>(size, name[0])).has_value());
    fs::last_write_time(store.entry_path(key), std::chrono::file_clock::from_sys(modified));
    return key;
  }
  std::uint64_t size_of(const Key& key) const { return fs::file_size(store.entry_path(key)); }
  bool present(const Key& key) const { return fs::exists(store.entry_path(key)); }
  std::uint64_t total() const {
    std::uint64_t bytes = 0;
    for (const StoredEntry& entry : store.list()) bytes += entry.file_size;
    return bytes;
  }
  // A temporary as AtomicFile names it, last modified `age` ago.
  fs::path orphan_of(const Key& key, std::chrono::seconds age, const std::string& pid = "4242") const {
    const fs::path target = store.entry_path(key);
    const fs::path path = target.parent_path() / (".tmp." + target.filename().string() + "." + pid + ".00c0ffee");
    EXPECT_EQ(temp_target_name(path.filename().string()), target.filename().string()) << "not kiln's naming";
    write_bytes(path, std::string_view("half an entry"));
    fs::last_write_time(path, fs::file_time_type::clock::now() - age);
    return path;
  }
};

TEST_F(EvictionTest, LeastRecentlyUsedGoFirstBySuppliedTimeThenFileTime) {
  const Key a = put("a", 100, kThen);
  const Key b = put("b", 200, kThen + seconds(10));
  const Key c = put("c", 300, kThen + seconds(20));
  const Key d = put("d", 400, kThen + seconds(30));
  // The index saw `a` used last and `c` long ago; b and d have only their files' times.
  const LastUsed last_used{{a, kThen + seconds(100)}, {c, kThen - seconds(100)}};
  const std::uint64_t all = total();
  const std::uint64_t keep = all - size_of(c) - size_of(b);  // exactly room for d and a

  const GcResult result = value_of(gc(store, keep, last_used));
  EXPECT_EQ(result.removed_keys, (std::vector<Key>{c, b}));
  EXPECT_EQ(result.removed, 2U);
  EXPECT_EQ(result.bytes_freed, all - keep);
  EXPECT_EQ(result.bytes_left, keep);
  EXPECT_EQ(total(), keep);
  EXPECT_FALSE(present(c));
  EXPECT_FALSE(present(b));
  EXPECT_TRUE(present(a));
  EXPECT_TRUE(present(d));

  // One byte less than what is left: the next least recent (d) goes, a stays.
  const GcResult again = value_of(gc(store, keep - 1, last_used));
  EXPECT_EQ(again.removed_keys, (std::vector<Key>{d}));
  EXPECT_EQ(again.bytes_left, size_of(a));
  EXPECT_TRUE(present(a));
}

TEST_F(EvictionTest, EqualRecencyFallsBackOnTheOlderFile) {
  const Key young = put("young", 10, kThen + seconds(5));
  const Key old = put("old", 10, kThen);
  const LastUsed last_used{{young, kThen}, {old, kThen}};
  const GcResult result = value_of(gc(store, total() - 1, last_used));
  EXPECT_EQ(result.removed_keys, (std::vector<Key>{old}));
  EXPECT_TRUE(present(young));
}

// An age bound: what was last used before it goes even when the folder fits,
// by the supplied time where there is one; a read-only store then refuses.
TEST_F(EvictionTest, EntriesUsedBeforeTheBoundGoWhateverTheSize) {
  const Key a = put("a", 100, kThen);
  const Key b = put("b", 100, kThen + seconds(10));
  const Key c = put("c", 100, kThen + seconds(20));
  const LastUsed last_used{{a, kThen + seconds(30)}};  // the index saw `a` used last
  const std::uint64_t all = total();

  const GcResult none = value_of(gc(store, all, last_used, kThen));
  EXPECT_EQ(none.removed, 0U);
  const GcResult result = value_of(gc(store, all, last_used, kThen + seconds(25)));
  EXPECT_EQ(result.removed_keys, (std::vector<Key>{b, c}));
  EXPECT_EQ(result.bytes_left, size_of(a));
  EXPECT_TRUE(present(a));

  const DiskStore read_only(dir(), {.read_only = true, .trusted_dirs = {}});
  const base::Result<GcResult> refused = gc(read_only, all, last_used, kThen + seconds(31));
  ASSERT_FALSE(refused.has_value());
  EXPECT_EQ(refused.error().kind, base::Failure::Kind::read_only);
  EXPECT_TRUE(present(a));
}

TEST_F(EvictionTest, FittingFolderLosesNothing) {
  const Key a = put("a", 50, kThen);
  put("b", 60, kThen);
  const std::uint64_t all = total();
  const GcResult result = value_of(gc(store, all));
  EXPECT_EQ(result.removed, 0U);
  EXPECT_EQ(result.bytes_freed, 0U);
  EXPECT_EQ(result.bytes_left, all);
  EXPECT_TRUE(present(a));
}

TEST_F(EvictionTest, ZeroRemovesEveryEntryAndNothingElse) {
  put("a", 50, kThen);
  put("b", 60, kThen);
  const fs::path notes = dir() / "notes.txt";
  write_bytes(notes, std::string_view("mine"));
  const std::uint64_t all = total();
  const GcResult result = value_of(gc(store, 0));
  EXPECT_EQ(result.removed, 2U);
  EXPECT_EQ(result.bytes_freed, all);
  EXPECT_EQ(result.bytes_left, 0U);
  EXPECT_TRUE(store.list().empty());
  EXPECT_TRUE(fs::exists(notes));
}

TEST_F(EvictionTest, EmptyOrMissingFolderIsNothingToDo) {
  const GcResult result = value_of(gc(DiskStore(temp.path() / "absent"), 0));
  EXPECT_EQ(result.removed, 0U);
  EXPECT_FALSE(fs::exists(temp.path() / "absent"));
}

// Readers hold a descriptor and read whole files: an unlink in the middle of
// a read leaves them the whole old entry, and after it they miss cleanly.
TEST_F(EvictionTest, GcWhileOthersReadNeverYieldsABadRead) {
  constexpr int kEntries = 64;
  std::vector<Key> keys;
  std::vector<std::vector<char>> payloads;
  for (int i = 0; i < kEntries; ++i) {
    keys.push_back(key_of("entry " + std::to_string(i)));
    payloads.emplace_back(4096 + static_cast<std::size_t>(i) * 97, static_cast<char>('a' + i % 26));
    ASSERT_TRUE(store.put(keys.back(), payloads.back()).has_value());
  }
  std::atomic<bool> stop{false};
  std::atomic<int> hits{0}, misses{0}, bad{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      while (!stop.load()) {
        for (int i = 0; i < kEntries; ++i) {
          const LookupResult got = store.get(keys[static_cast<std::size_t>(i)]);
          if (got.payload && *got.payload == payloads[static_cast<std::size_t>(i)]) ++hits;
          else if (!got.payload && !got.problem) ++misses;
          else ++bad;
        }
      }
    });
  }
  while (hits.load() < kEntries) std::this_thread::yield();  // readers are under way
  const std::uint64_t all = total();
  for (const std::uint64_t limit : {all * 3 / 4, all / 2, all / 4, std::uint64_t{0}}) {
    const GcResult result = value_of(gc(store, limit));
    EXPECT_LE(result.bytes_left, limit);
  }
  stop = true;
  for (std::thread& reader : readers) reader.join();
  EXPECT_EQ(bad.load(), 0) << "a reader saw a broken entry";
  EXPECT_GT(misses.load(), 0) << "the readers never ran after an eviction";
  EXPECT_TRUE(store.list().empty());
}

TEST_F(EvictionTest, SweepRemovesOldTemporariesOnly) {
  const Key key = put("a", 10, kThen);
  const fs::path old = orphan_of(key, hours(2));
  const fs::path young = orphan_of(key, seconds(0), "4343");
  const fs::path shard = store.entry_path(key).parent_path();
  // Not kiln's: a foreign ".tmp." name, a temporary named after no entry, one outside a shard folder.
  const std::vector<fs::path> foreign{shard / ".tmp.notours", shard / ".tmp.README.1.ab", dir() / "zz" / old.filename(),
                                      dir() / ".tmp.index.sqlite.7.0f"};
  fs::create_directories(dir() / "zz");
  for (const fs::path& path : foreign) {
    write_bytes(path, std::string_view("someone else's"));
    fs::last_write_time(path, fs::file_time_type::clock::now() - hours(2));
  }

  EXPECT_EQ(store.sweep_temporaries(hours(1)), 1U);
  EXPECT_FALSE(fs::exists(old));
  EXPECT_TRUE(fs::exists(young)) << "a put() in flight must keep its temporary";
  for (const fs::path& path : foreign) EXPECT_TRUE(fs::exists(path)) << path;
  EXPECT_TRUE(store.get(key).payload.has_value());
  EXPECT_EQ(store.sweep_temporaries(hours(1)), 0U);
  EXPECT_EQ(store.sweep_temporaries(seconds(0)), 1U) << "age 0: the young one goes too";
}

TEST_F(EvictionTest, VerifyRemovesBadEntriesAndOrphans) {
  const Key good = put("good", 100, kThen);
  const Key flipped = put("flipped", 100, kThen);
  const Key cut = put("cut", 100, kThen);
  std::vector<char> bytes = read_bytes(store.entry_path(flipped));
  bytes[bytes.size() / 2 + 20] ^= 0x10;
  write_bytes(store.entry_path(flipped), bytes);
  fs::resize_file(store.entry_path(cut), size_of(cut) - 1);
  const fs::path orphan = orphan_of(good, hours(2));

  const VerifyResult result = value_of(verify(store));
  EXPECT_EQ(result.checked, 3U);
  EXPECT_EQ(result.bad, 2U);
  EXPECT_EQ(result.removed, 2U);
  EXPECT_EQ(result.temporaries_removed, 1U);
  EXPECT_EQ(result.removed_keys.size(), 2U);
  for (const Key& key : {flipped, cut}) {
    EXPECT_NE(std::find(result.removed_keys.begin(), result.removed_keys.end(), key), result.removed_keys.end());
  }
  ASSERT_EQ(result.problems.size(), 2U);
  for (const base::Failure& problem : result.problems) EXPECT_EQ(problem.kind, base::Failure::Kind::corrupt);
  const std::string problems = result.problems[0].message + "\n" + result.problems[1].message;
  EXPECT_NE(problems.find(store.entry_path(flipped).string()), std::string::npos) << problems;
  EXPECT_NE(problems.find(store.entry_path(cut).string()), std::string::npos) << problems;
  EXPECT_TRUE(present(good));
  EXPECT_FALSE(present(flipped));
  EXPECT_FALSE(present(cut));
  EXPECT_FALSE(fs::exists(orphan));

  const VerifyResult again = value_of(verify(store));
  EXPECT_EQ(again.checked, 1U);
  EXPECT_EQ(again.bad, 0U);
}

TEST_F(EvictionTest, VerifyCountsButKeepsAnUntrustedEntry) {
  const Key key = put("shared", 100, kThen);
  ASSERT_EQ(::chmod(store.entry_path(key).c_str(), 0666), 0);
  const VerifyResult result = value_of(verify(store));
  EXPECT_EQ(result.checked, 1U);
  EXPECT_EQ(result.bad, 1U);
  EXPECT_EQ(result.removed, 0U);
  ASSERT_EQ(result.problems.size(), 1U);
  EXPECT_EQ(result.problems[0].kind, base::Failure::Kind::untrusted) << result.problems[0].message;
  EXPECT_TRUE(present(key));
}

// A FIFO under an entry's name once made every loader wait for a writer,
// for ever, and verify called the cache healthy (it listed regular files
// only). Now verify returns, counts it as damage left in place, and names it.
TEST_F(EvictionTest, VerifyReportsAFifoAtAnEntrysPathWithoutBlocking) {
  const Key good = put("good", 100, kThen);
  const Key jammed = key_of("jammed");
  const fs::path fifo = store.entry_path(jammed);
  fs::create_directories(fifo.parent_path());
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const VerifyResult result = value_of(verify(store));
  EXPECT_EQ(result.checked, 2U);
  EXPECT_EQ(result.bad, 1U);
  EXPECT_EQ(result.odd, 1U);
  EXPECT_EQ(result.removed, 0U);
  EXPECT_TRUE(result.damage_left());
  ASSERT_EQ(result.problems.size(), 1U);
  EXPECT_EQ(result.problems[0].message, fifo.string() + ": a FIFO, not an entry file (left in place)");
  EXPECT_TRUE(fs::is_fifo(fifo)) << "not kiln's to remove";
  EXPECT_TRUE(present(good));
  // A loader asking for that key gets a miss naming it, at once.
  const LookupResult found = store.get(jammed);
  EXPECT_FALSE(found.payload.has_value());
  EXPECT_NE(testing::problem_of(found).find(fifo.string() + ": a FIFO"), std::string::npos) << testing::problem_of(found);
  EXPECT_FALSE(found.removed);
}

TEST_F(EvictionTest, VerifyOfAHealthyCacheLeavesNoDamage) {
  put("good", 100, kThen);
  const VerifyResult result = value_of(verify(store));
  EXPECT_EQ(result.bad, 0U);
  EXPECT_FALSE(result.damage_left());
}

// A file under an entry's name that kiln did not write (no trailer): gc
// spares it, says so, and removes another entry instead to fit.
TEST_F(EvictionTest, GcRemovesOnlyFilesShapedAsEntries) {
  const Key foreign = put("foreign", 100, kThen - hours(10));  // the oldest: gc's first pick
  const Key older = put("older", 100, kThen - hours(5));
  const Key newer = put("newer", 100, kThen);
  const std::string notes(size_of(foreign), 'n');
  write_bytes(store.entry_path(foreign), notes);
  fs::last_write_time(store.entry_path(foreign), std::chrono::file_clock::from_sys(kThen - hours(10)));
  const GcResult result = value_of(gc(store, total() - 1));
  EXPECT_EQ(result.removed, 1U);
  EXPECT_EQ(result.removed_keys, std::vector<Key>{older});
  ASSERT_EQ(result.failures.size(), 1U);
  EXPECT_EQ(result.failures[0].message,
            store.entry_path(foreign).string() + ": named as a cache entry but not shaped as one: not removed");
  EXPECT_EQ(read_bytes(store.entry_path(foreign)), std::vector<char>(notes.begin(), notes.end()));
  EXPECT_TRUE(present(newer));
}

}  // namespace
}  // namespace kiln::cache
