// Corruption injected into a real entry: every way a file can go bad (bit
// flips in the payload, the metadata and the trailer; cuts; an empty file; a
// foreign magic; a format from the future or the past) is caught before
// anything runs, and the runtime compiles, replaces the entry and computes the
// right values.
//
// Every single-bit flip is checked at the cache level (decode_entry,
// microseconds); a sample of each kind goes through a whole Runtime, a compile each.
#include <xxhash.h>

#include <fstream>
#include <random>

#include "cache/entry_format.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/key.hpp"
#include "cache/little_endian.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

const char* kName = "update_theta_and_exner";
constexpr int kCells = 32, kLevels = 8;
constexpr std::size_t kVersionAt = 8, kTrailerSumAt = 64;  // inside the trailer: entry_format.hpp's table

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// One kernel resolved into a fresh cache: its entry, with all three regions
// (payload at offset 0, metadata, trailer).
class CorruptionTest : public ::testing::Test {
 protected:
  TempDir dir;
  cache::Key key;
  fs::path entry;
  std::string good;  // the whole entry file
  std::size_t payload_size = 0;
  std::size_t metadata_size = 0;

  void SetUp() override {
    std::string hex;
    {
      Runtime first(config_for(dir.path()));
      ThetaCase c(kCells, kLevels, false);
      hex = first.kernel(kName, c.spec(0, kCells, 0, kLevels)).key();
    }
    ASSERT_TRUE(cache::Key::from_hex(hex, key)) << hex;
    const std::vector<fs::path> files = entry_files(dir.path());
    ASSERT_EQ(files.size(), 1U);
    entry = files[0];
    good = read_all(entry);
    const cache::DecodedEntry decoded = cache::decode_entry(good, key);
    ASSERT_EQ(decoded.error, cache::EntryError::none) << cache::describe(decoded.error);
    const std::optional<cache::IndexRecord> record = cache::decode_metadata(decoded.metadata);
    ASSERT_TRUE(record.has_value()) << "the runtime stores the index record as metadata: " << decoded.metadata;
    EXPECT_EQ(record->kernel, kName);
    metadata_size = decoded.metadata.size();
    payload_size = decoded.payload.size();
    ASSERT_FALSE(decoded.payload.empty());
    ASSERT_EQ(decoded.payload.data(), good.data()) << "the payload is the file's first bytes";
    ASSERT_EQ(good.compare(0, 4, "\x7f" "ELF"), 0) << "an ELF image at offset 0";
  }

  std::size_t metadata_at() const { return payload_size; }
  std::size_t trailer_at() const { return payload_size + metadata_size; }

  cache::EntryError decode(const std::string& bytes) const { return cache::decode_entry(bytes, key).error; }

  // A fresh Runtime meets `bytes` as the entry: exactly one compile, no disk
  // hit, the reference's values; the next Runtime loads the replacement.
  void expect_replaced(const std::string& bytes, const std::string& what) {
    SCOPED_TRACE(what);
    write_all(entry, bytes);
    {
      Runtime rt(config_for(dir.path()));
      ThetaCase got(kCells, kLevels, false), want(kCells, kLevels, false);
      got.run(rt.kernel(kName, got.spec(0, kCells, 0, kLevels)));
      want.reference(0, kCells, 0, kLevels);
      expect_close(got.theta_v, want.theta_v);
      expect_close(got.exner, want.exner);
      const KernelMetrics m = rt.metrics().kernels.at(kName);
      EXPECT_EQ(m.compiles, 1U);
      EXPECT_EQ(m.disk_hits, 0U);
    }
    Runtime next(config_for(dir.path()));
    ThetaCase c(kCells, kLevels, false);
    next.kernel(kName, c.spec(0, kCells, 0, kLevels));
    EXPECT_EQ(next.metrics().kernels.at(kName).disk_hits, 1U) << "the replacement is a whole entry";
  }
};

TEST_F(CorruptionTest, TheGoodEntryIsAHit) {
  Runtime rt(config_for(dir.path()));
  ThetaCase got(kCells, kLevels, false), want(kCells, kLevels, false);
  got.run(rt.kernel(kName, got.spec(0, kCells, 0, kLevels)));
  want.reference(0, kCells, 0, kLevels);
  expect_close(got.theta_v, want.theta_v);
  EXPECT_EQ(rt.metrics().kernels.at(kName).disk_hits, 1U);
  EXPECT_EQ(rt.metrics().kernels.at(kName).compiles, 0U);
}

// Each region of the file in turn: every single-bit flip, each decoded from a
// copy of the good file with that one bit changed, all caught by the decoder;
// a few at random offsets of each region also through a whole Runtime.
TEST_F(CorruptionTest, SingleBitFlipsAnywhereAreCaught) {
  struct Region {
    const char* name;
    std::size_t begin, end;
  };
  const Region regions[] = {{"payload", 0, metadata_at()},
                            {"metadata", metadata_at(), trailer_at()},
                            {"trailer", trailer_at(), good.size()}};
  ASSERT_EQ(trailer_at() + cache::kTrailerSize, good.size());
  constexpr std::size_t kThroughTheRuntime = 3;
  std::mt19937 rng(20240611);
  std::size_t flipped = 0;
  std::string bytes = good;
  for (const Region& region : regions) {
    ASSERT_LT(region.begin, region.end) << region.name;
    for (std::size_t at = region.begin; at < region.end; ++at) {
      for (int bit = 0; bit < 8; ++bit) {
        bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
        ASSERT_NE(decode(bytes), cache::EntryError::none) << region.name << " byte " << at << " bit " << bit;
        bytes[at] = good[at];
        ++flipped;
      }
    }
    std::uniform_int_distribution<std::size_t> offset(region.begin, region.end - 1);
    for (std::size_t i = 0; i < kThroughTheRuntime; ++i) {
      const std::size_t at = offset(rng);
      const int bit = static_cast<int>(rng() % 8);
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      expect_replaced(bytes, std::string(region.name) + " byte " + std::to_string(at) + ", bit " + std::to_string(bit));
      bytes[at] = good[at];
    }
  }
  EXPECT_EQ(flipped, 8 * good.size());
}

TEST_F(CorruptionTest, CutsAtRandomLengthsAreCaught) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> length(0, good.size() - 1);
  for (int i = 0; i < 200; ++i) {
    const std::size_t keep = length(rng);
    ASSERT_NE(decode(good.substr(0, keep)), cache::EntryError::none) << keep;
  }
  // One cut inside each region through the runtime.
  for (std::size_t keep : {payload_size / 2, metadata_at() + metadata_size / 2, good.size() - 1}) {
    expect_replaced(good.substr(0, keep), "cut to " + std::to_string(keep) + " bytes");
  }
}

// Bytes lost at the front leave the trailer whole: its sizes catch the cut.
TEST_F(CorruptionTest, CutsAtTheFrontAreCaught) {
  for (std::size_t drop = 1; drop <= payload_size + metadata_size; drop += 1 + drop / 4) {
    ASSERT_EQ(decode(good.substr(drop)), cache::EntryError::size_mismatch) << drop;
  }
  expect_replaced(good.substr(1), "first byte dropped");
}

TEST_F(CorruptionTest, EmptyFileIsCaught) {
  EXPECT_EQ(decode(""), cache::EntryError::truncated_trailer);
  expect_replaced("", "empty file");
}

TEST_F(CorruptionTest, WrongMagicIsCaught) {
  std::string bytes = good;
  bytes.replace(trailer_at(), 4, "\x7f" "ELF");
  EXPECT_EQ(decode(bytes), cache::EntryError::bad_magic);
  expect_replaced(bytes, "ELF magic");
}

// A later kiln's entry, whole and with a trailer checksum that matches: this
// version cannot read it, so it is a miss, never a misread.
TEST_F(CorruptionTest, FutureFormatVersionIsCaught) {
  std::string bytes = good;
  char* trailer = bytes.data() + trailer_at();
  cache::store_le<std::uint32_t>(trailer + kVersionAt, cache::kFormatVersion + 1);
  cache::store_le<std::uint64_t>(trailer + kTrailerSumAt, XXH3_64bits(trailer, kTrailerSumAt));
  EXPECT_EQ(decode(bytes), cache::EntryError::unsupported_version);
  expect_replaced(bytes, "format version " + std::to_string(cache::kFormatVersion + 1));
}

// An earlier kiln's entry (format version 2: the same fields as a header at
// offset 0, then the metadata, then the payload), left in a cache folder by
// an upgrade: a miss that says so, replaced by a version-3 entry.
TEST_F(CorruptionTest, OlderFormatVersionIsCaught) {
  std::string header = good.substr(trailer_at());
  cache::store_le<std::uint32_t>(header.data() + kVersionAt, 2);
  cache::store_le<std::uint64_t>(header.data() + kTrailerSumAt, XXH3_64bits(header.data(), kTrailerSumAt));
  const std::string older = header + good.substr(metadata_at(), metadata_size) + good.substr(0, payload_size);
  EXPECT_EQ(decode(older), cache::EntryError::unsupported_version);
  expect_replaced(older, "format version 2");
  EXPECT_EQ(decode(read_all(entry)), cache::EntryError::none) << "replaced by an entry of this version";
}

}  // namespace
}  // namespace kiln::testing
