// Cache administration through the public API (kiln/cache.hpp), on a cache
// whose entries a Runtime made: listing, figures, reading an entry, verify
// catching a corrupted one, gc to a size and to an age with exact counts, clear, reindex
// after the index is deleted, and what a read-only Cache refuses.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "kiln/cache.hpp"
#include "kiln/errors.hpp"
#include "kiln/runtime.hpp"
#include "tests/support/temp_dir.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// A small user kernel: it compiles fast, and each n is its own entry.
constexpr const char* kSmooth =
    "#pragma kiln kernel smooth\n"
    "#pragma kiln array double x[1]\n"
    "#pragma kiln domain n\n"
    "for (kiln::index_t i = 0; i < n; ++i) x(i) *= 0.5;\n";

Config config_for(const fs::path& dir) {
  Config config;
  config.cache_dir = dir;
  config.log_level = "error";
  return config;
}

// Flips the first byte of a file: an entry's payload comes first (cache/entry_format.hpp).
void flip_first_byte(const fs::path& file) {
  std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
  char c = 0;
  f.read(&c, 1);
  c = static_cast<char>(c ^ 1);
  f.seekp(0);
  f.write(&c, 1);
  ASSERT_TRUE(f.good()) << file;
}

std::vector<std::string> keys_of(const std::vector<CacheEntryFile>& files) {
  std::vector<std::string> keys;
  for (const CacheEntryFile& f : files) keys.push_back(f.key);
  return keys;
}

std::vector<std::string> keys_of(const std::vector<CacheRecord>& records) {
  std::vector<std::string> keys;
  for (const CacheRecord& r : records) keys.push_back(r.key);
  return keys;
}

// Three entries of `smooth` (n = 8, 16, 32), made in that order by a Runtime
// that is gone before the test administers the cache.
class CacheAdmin : public ::testing::Test {
 protected:
  void SetUp() override {
    Runtime rt(config_for(dir.path()));
    rt.register_kernel(kSmooth, "smooth.kiln");
    for (long long n : {8LL, 16LL, 32LL}) made.push_back(rt.kernel("smooth", Spec().set("n", n)).key());
    sorted = made;
    std::sort(sorted.begin(), sorted.end());
  }

  Cache writable() const { return Cache(config_for(dir.path())); }
  Cache read_only() const { return Cache(dir.path(), {.read_only = true, .log_level = "error"}); }
  fs::path file_of(const std::string& key) const { return writable().entry_file(key); }

  TempDir dir;
  std::vector<std::string> made;    // in the order compiled
  std::vector<std::string> sorted;  // by key
};

TEST_F(CacheAdmin, ListsEveryEntryAndItsRecordByKey) {
  const Cache cache = writable();
  const std::vector<CacheEntryFile> files = cache.entries();
  EXPECT_EQ(keys_of(files), sorted);
  for (const CacheEntryFile& f : files) {
    EXPECT_EQ(f.file, cache.entry_file(f.key));
    EXPECT_EQ(f.file_bytes, fs::file_size(f.file));
  }
  const std::vector<CacheRecord> records = cache.records();
  ASSERT_EQ(keys_of(records), sorted);
  for (const CacheRecord& r : records) {
    EXPECT_EQ(r.kernel, "smooth");
    EXPECT_EQ(r.backend, "cpu");
    EXPECT_GT(r.payload_bytes, 0u);
    EXPECT_GE(r.compile_ms, 0.0);
    EXPECT_FALSE(r.kernel_digest.empty()) << "a user kernel's record carries its text's digest";
  }
  const auto n8 = std::find_if(records.begin(), records.end(), [&](const CacheRecord& r) { return r.key == made[0]; });
  EXPECT_NE(n8->specialisation.find("\"n\":8"), std::string::npos) << n8->specialisation;
  EXPECT_TRUE(cache.index_problem().empty()) << cache.index_problem();
}

TEST_F(CacheAdmin, StatsCountEntriesBytesAndRecords) {
  const CacheStats stats = writable().stats();
  std::uint64_t bytes = 0;
  for (const std::string& key : made) bytes += fs::file_size(file_of(key));
  EXPECT_EQ(stats.dir, dir.path());
  EXPECT_EQ(stats.index, dir.path() / "index.sqlite");
  EXPECT_EQ(stats.entries, 3u);
  EXPECT_EQ(stats.bytes, bytes);
  EXPECT_EQ(stats.indexed, 3u);
  EXPECT_EQ(stats.hits, 0);  // each was compiled, none loaded from disk
}

TEST_F(CacheAdmin, ReadGivesAnEntryWholeWithItsRecordAndRecipe) {
  const Cache cache = read_only();
  const std::optional<CacheEntry> entry = cache.read(made[1]);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->file.key, made[1]);
  EXPECT_EQ(entry->file.file_bytes, fs::file_size(cache.entry_file(made[1])));
  EXPECT_EQ(entry->record.kernel, "smooth");
  EXPECT_NE(entry->record.specialisation.find("\"n\":16"), std::string::npos) << entry->record.specialisation;
  EXPECT_EQ(entry->record.payload_bytes, entry->payload.size());
  EXPECT_LT(entry->payload.size(), entry->file.file_bytes);  // the metadata and trailer follow it
  ASSERT_TRUE(entry->recipe.has_value());
  EXPECT_EQ(entry->recipe->opt_level, "O3");
  EXPECT_EQ(entry->recipe->target_cpu, "native");
  EXPECT_FALSE(entry->recipe->compiler.empty());
  // Either case; an absent key is no entry; text that is not a key is misuse.
  std::string upper = made[1];
  std::transform(upper.begin(), upper.end(), upper.begin(), [](unsigned char c) { return std::toupper(c); });
  EXPECT_EQ(cache.read(upper)->file.key, made[1]);
  EXPECT_FALSE(cache.read(std::string(32, '0')).has_value());
  EXPECT_THROW(cache.read("12ab"), ArgumentError);
  EXPECT_THROW(cache.read(std::string(32, 'g')), ArgumentError);
}

TEST_F(CacheAdmin, VerifyRemovesACorruptedEntryAndItsRecord) {
  Cache cache = writable();
  const fs::path bad = file_of(made[0]);
  flip_first_byte(bad);
  const CacheVerifyReport report = cache.verify();
  EXPECT_EQ(report.checked, 3u);
  EXPECT_EQ(report.bad, 1u);
  EXPECT_EQ(report.removed, 1u);
  EXPECT_FALSE(report.damage_left());
  EXPECT_EQ(report.removed_keys, std::vector<std::string>{made[0]});
  ASSERT_EQ(report.problems.size(), 1u);
  EXPECT_EQ(report.problems[0], bad.string() + ": payload checksum mismatch");
  EXPECT_FALSE(fs::exists(bad));
  EXPECT_EQ(cache.records().size(), 2u);
  const CacheVerifyReport again = cache.verify();
  EXPECT_EQ(again.checked, 2u);
  EXPECT_EQ(again.bad, 0u);
}

TEST_F(CacheAdmin, AReadOnlyCacheReportsACorruptedEntryAndKeepsIt) {
  Cache cache = read_only();
  const fs::path bad = file_of(made[2]);
  flip_first_byte(bad);
  const CacheVerifyReport report = cache.verify();
  EXPECT_EQ(report.bad, 1u);
  EXPECT_EQ(report.removed, 0u);
  EXPECT_TRUE(report.damage_left());
  EXPECT_TRUE(fs::exists(bad));
  try {
    (void)cache.read(made[2]);
    FAIL() << "a corrupted entry was read";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), bad.string() + ": payload checksum mismatch");
  }
  EXPECT_TRUE(fs::exists(bad));
}

// The least recently used go first: the index's last_used (seconds), then
// the file's time, so the entries go in the order they were made.
TEST_F(CacheAdmin, GcEvictsTheLeastRecentlyUsedToTheBound) {
  std::vector<std::uint64_t> size;
  for (const std::string& key : made) size.push_back(fs::file_size(file_of(key)));
  const std::uint64_t total = size[0] + size[1] + size[2];
  Cache cache = writable();

  const CacheGcReport fits = cache.gc(total);
  EXPECT_EQ(fits.removed, 0u);
  EXPECT_EQ(fits.bytes_left, total);
  EXPECT_TRUE(fits.fits());

  const CacheGcReport one = cache.gc(total - 1);
  EXPECT_EQ(one.limit, total - 1);
  EXPECT_EQ(one.removed, 1u);
  EXPECT_EQ(one.bytes_freed, size[0]);
  EXPECT_EQ(one.bytes_left, size[1] + size[2]);
  EXPECT_EQ(one.removed_keys, std::vector<std::string>{made[0]});
  EXPECT_TRUE(one.failures.empty());

  const CacheGcReport next = cache.gc(size[2]);
  EXPECT_EQ(next.removed_keys, std::vector<std::string>{made[1]});
  EXPECT_EQ(next.bytes_left, size[2]);
  EXPECT_EQ(keys_of(cache.entries()), std::vector<std::string>{made[2]});
  EXPECT_EQ(keys_of(cache.records()), std::vector<std::string>{made[2]});
}

// With the index off, an entry was last used when it was stored: its file's time.
TEST_F(CacheAdmin, GcWithAnAgeRemovesWhatWasUnusedForLonger) {
  const auto now = fs::file_time_type::clock::now();
  fs::last_write_time(file_of(made[0]), now - std::chrono::hours(72));
  fs::last_write_time(file_of(made[1]), now - std::chrono::hours(48));
  Cache cache(dir.path(), {.index_path = "off", .log_level = "error"});
  constexpr std::uint64_t kAnySize = ~std::uint64_t{0};

  const CacheGcReport recent = cache.gc(kAnySize, std::chrono::hours(96));
  EXPECT_EQ(recent.removed, 0u);
  const CacheGcReport older = cache.gc(kAnySize, std::chrono::hours(60));
  EXPECT_EQ(older.max_age, std::chrono::seconds(std::chrono::hours(60)));
  EXPECT_EQ(older.removed_keys, std::vector<std::string>{made[0]});
  EXPECT_EQ(cache.gc(kAnySize, std::chrono::hours(36)).removed_keys, std::vector<std::string>{made[1]});
  EXPECT_EQ(keys_of(cache.entries()), std::vector<std::string>{made[2]});
  EXPECT_EQ(cache.gc(kAnySize, std::chrono::hours(1)).removed, 0u);  // stored just now
  EXPECT_THROW((void)cache.gc(kAnySize, std::chrono::seconds(-1)), ArgumentError);
}

TEST_F(CacheAdmin, ClearRemovesEveryEntryAndRecord) {
  Cache cache = writable();
  const CacheClearReport report = cache.clear();
  EXPECT_EQ(report.removed, 3u);
  EXPECT_TRUE(report.failures.empty());
  EXPECT_TRUE(cache.entries().empty());
  EXPECT_TRUE(cache.records().empty());
  const CacheStats stats = cache.stats();
  EXPECT_EQ(stats.entries, 0u);
  EXPECT_EQ(stats.indexed, 0u);
}

TEST_F(CacheAdmin, ReindexRebuildsADeletedIndexFromTheEntries) {
  // A Runtime notes its entries in the index's journal; the index is made where first opened.
  ASSERT_EQ(writable().records().size(), 3u);
  ASSERT_TRUE(fs::remove(dir.path() / "index.sqlite"));
  Cache cache = writable();
  const CacheReindexReport report = cache.reindex();
  EXPECT_EQ(report.records, 3u);
  EXPECT_EQ(report.without_metadata, 0u);
  EXPECT_EQ(report.skipped, 0u);
  EXPECT_TRUE(fs::exists(dir.path() / "index.sqlite"));
  const std::vector<CacheRecord> records = cache.records();
  EXPECT_EQ(keys_of(records), sorted);
  for (const CacheRecord& r : records) {
    EXPECT_EQ(r.kernel, "smooth");
    EXPECT_EQ(r.hits, 0);
  }
}

TEST_F(CacheAdmin, AFileAtTheIndexPathThatIsNotKilnsIsRefusedAndNothingRemoved) {
  const fs::path foreign = dir.path() / "notes.txt";
  std::ofstream(foreign) << "not an index\n";
  Cache cache(dir.path(), {.index_path = foreign, .log_level = "error"});
  EXPECT_THROW((void)cache.records(), Error);
  try {
    (void)cache.clear();
    FAIL() << "clear went on beside a foreign index";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(foreign.string() + ": not a SQLite database"), std::string::npos) << e.what();
  }
  EXPECT_EQ(cache.entries().size(), 3u);
  EXPECT_THROW((void)cache.reindex(), Error);
  std::ifstream left(foreign);
  std::string text;
  std::getline(left, text);
  EXPECT_EQ(text, "not an index") << "the foreign file was changed";
}

TEST_F(CacheAdmin, AReadOnlyCacheRefusesWhatWouldWrite) {
  Cache cache = read_only();
  EXPECT_TRUE(cache.read_only());
  EXPECT_TRUE(cache.records().empty());  // the index is not opened
  EXPECT_THROW((void)cache.clear(), Error);
  EXPECT_THROW((void)cache.reindex(), Error);
  EXPECT_THROW((void)cache.gc(0), Error);
  EXPECT_EQ(cache.gc(std::uint64_t{1} << 40).removed, 0u);  // fits: nothing to remove
  EXPECT_EQ(cache.entries().size(), 3u);
}

TEST_F(CacheAdmin, WithTheIndexOffThereAreNoRecordsAndNothingToRebuild) {
  Cache cache(dir.path(), {.index_path = "off", .log_level = "error"});
  EXPECT_TRUE(cache.index_path().empty());
  EXPECT_TRUE(cache.records().empty());
  EXPECT_EQ(cache.stats().indexed, 0u);
  EXPECT_THROW((void)cache.reindex(), Error);
}

TEST(CacheTiers, LookupTiersAreTheReadOnlyTiersThenTheCacheFolderAllReadOnly) {
  TempDir shipped, own;
  Config config = config_for(own.path());
  config.read_only_tiers = {shipped.path()};
  const std::vector<Cache> tiers = Cache::lookup_tiers(config);
  ASSERT_EQ(tiers.size(), 2u);
  EXPECT_EQ(tiers[0].dir(), shipped.path());
  EXPECT_EQ(tiers[1].dir(), own.path());
  EXPECT_TRUE(tiers[0].read_only() && tiers[1].read_only());
}

TEST(CacheSizes, ParseAsKilnCacheMaxSizeDoes) {
  EXPECT_EQ(parse_byte_size("500M"), std::uint64_t{500} << 20);
  EXPECT_EQ(parse_byte_size("1.5G"), std::uint64_t{3} << 29);
  EXPECT_EQ(parse_byte_size("1048576"), std::uint64_t{1} << 20);
  EXPECT_FALSE(parse_byte_size("1e3").has_value());
  EXPECT_FALSE(parse_byte_size("12x").has_value());
}

TEST(CacheOpen, NoFolderIsMisuse) { EXPECT_THROW(Cache(fs::path()), ArgumentError); }

}  // namespace
}  // namespace kiln::testing
