// Corruption injected into a real entry: every way a file can go bad (bit
// flips in the header, the metadata and the payload; cuts; an empty file; a
// foreign magic; a format from the future) is caught before anything runs,
// and the runtime compiles, replaces the entry and computes the right values.
//
// Most flips are checked at the cache level (decode_entry, microseconds); a
// sample of each kind goes through a whole Runtime, a compile each.
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
constexpr std::size_t kVersionAt = 8, kHeaderSumAt = 64;  // entry_format.hpp's table

std::string read_all(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

void write_all(const fs::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// One kernel resolved into a fresh cache: its entry, with all three regions.
class CorruptionTest : public ::testing::Test {
 protected:
  TempDir dir;
  cache::Key key;
  fs::path entry;
  std::string good;  // the whole entry file
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
    ASSERT_FALSE(decoded.payload.empty());
  }

  std::size_t payload_at() const { return cache::kHeaderSize + metadata_size; }

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

// Each region of the file in turn: a few hundred single-bit flips at random
// offsets, each on a fresh copy of the good file, all caught by the decoder;
// the first few of each region also through a whole Runtime.
TEST_F(CorruptionTest, SingleBitFlipsAnywhereAreCaught) {
  struct Region {
    const char* name;
    std::size_t begin, end, flips;
  };
  const Region regions[] = {{"header", 0, cache::kHeaderSize, 150},
                            {"metadata", cache::kHeaderSize, payload_at(), 150},
                            {"payload", payload_at(), good.size(), 300}};
  constexpr std::size_t kThroughTheRuntime = 3;
  std::mt19937 rng(20240611);
  std::size_t flipped = 0;
  for (const Region& region : regions) {
    ASSERT_LT(region.begin, region.end) << region.name;
    std::uniform_int_distribution<std::size_t> offset(region.begin, region.end - 1);
    for (std::size_t i = 0; i < region.flips; ++i) {
      std::string bytes = good;
      const std::size_t at = offset(rng);
      const int bit = static_cast<int>(rng() % 8);
      bytes[at] = static_cast<char>(bytes[at] ^ (1 << bit));
      ASSERT_NE(decode(bytes), cache::EntryError::none) << region.name << " byte " << at << " bit " << bit;
      if (i < kThroughTheRuntime) {
        expect_replaced(bytes, std::string(region.name) + " byte " + std::to_string(at) + ", bit " +
                                   std::to_string(bit));
      }
      ++flipped;
    }
  }
  EXPECT_GE(flipped, 600U);
}

TEST_F(CorruptionTest, CutsAtRandomLengthsAreCaught) {
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::size_t> length(0, good.size() - 1);
  for (int i = 0; i < 200; ++i) {
    const std::size_t keep = length(rng);
    ASSERT_NE(decode(good.substr(0, keep)), cache::EntryError::none) << keep;
  }
  // One cut inside each region through the runtime.
  for (std::size_t keep : {cache::kHeaderSize / 2, cache::kHeaderSize + metadata_size / 2, good.size() - 1}) {
    expect_replaced(good.substr(0, keep), "cut to " + std::to_string(keep) + " bytes");
  }
}

TEST_F(CorruptionTest, EmptyFileIsCaught) {
  EXPECT_EQ(decode(""), cache::EntryError::truncated_header);
  expect_replaced("", "empty file");
}

TEST_F(CorruptionTest, WrongMagicIsCaught) {
  std::string bytes = good;
  bytes.replace(0, 4, "\x7f" "ELF");
  EXPECT_EQ(decode(bytes), cache::EntryError::bad_magic);
  expect_replaced(bytes, "ELF magic");
}

// A later kiln's entry, whole and with a header checksum that matches: this
// version cannot read it, so it is a miss, never a misread.
TEST_F(CorruptionTest, FutureFormatVersionIsCaught) {
  std::string bytes = good;
  cache::store_le<std::uint32_t>(bytes.data() + kVersionAt, cache::kFormatVersion + 1);
  cache::store_le<std::uint64_t>(bytes.data() + kHeaderSumAt, XXH3_64bits(bytes.data(), kHeaderSumAt));
  EXPECT_EQ(decode(bytes), cache::EntryError::unsupported_version);
  expect_replaced(bytes, "format version " + std::to_string(cache::kFormatVersion + 1));
}

}  // namespace
}  // namespace kiln::testing
