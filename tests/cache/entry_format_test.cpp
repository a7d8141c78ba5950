#include "cache/entry_format.hpp"

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <xxhash.h>

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

const Key kKey{0x1122334455667788ULL, 0x99aabbccddeeff00ULL};
const std::string kPayload = "an opaque object file\n\x00\x01\x02 with bytes";

std::span<const char> span_of(const std::string& s) { return {s.data(), s.size()}; }

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_u64(std::string& bytes, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A forged header still passes its own checksum, so the field itself is what is tested.
void reseal_header(std::string& bytes) { put_u64(bytes, 48, XXH3_64bits(bytes.data(), 48)); }

EntryError decode_error(const std::string& bytes, const Key& key = kKey) {
  return decode_entry(span_of(bytes), key).error;
}

TEST(EntryFormat, RoundTrips) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  ASSERT_EQ(bytes.size(), kHeaderSize + kPayload.size());
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  ASSERT_EQ(decoded.error, EntryError::none) << describe(decoded.error);
  EXPECT_EQ(std::string(decoded.payload.begin(), decoded.payload.end()), kPayload);
}

TEST(EntryFormat, EmptyPayloadRoundTrips) {
  const std::string bytes = encode_entry(kKey, {});
  EXPECT_EQ(bytes.size(), kHeaderSize);
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  EXPECT_EQ(decoded.error, EntryError::none);
  EXPECT_TRUE(decoded.payload.empty());
}

TEST(EntryFormat, HeaderLayoutIsAsDocumented) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  EXPECT_EQ(bytes.substr(0, 8), std::string("KILNENT\0", 8));
  EXPECT_EQ(bytes.substr(8, 4), std::string("\x01\0\0\0", 4));
  EXPECT_EQ(bytes.substr(12, 4), std::string("\x38\0\0\0", 4));  // 56
  EXPECT_EQ(bytes.substr(16, 8), std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8));
  EXPECT_EQ(bytes.substr(24, 8), std::string("\x00\xff\xee\xdd\xcc\xbb\xaa\x99", 8));
  std::string expected_size(8, '\0');
  put_u64(expected_size, 0, kPayload.size());
  EXPECT_EQ(bytes.substr(32, 8), expected_size);
  std::string expected_sum(8, '\0');
  put_u64(expected_sum, 0, XXH3_64bits(kPayload.data(), kPayload.size()));
  EXPECT_EQ(bytes.substr(40, 8), expected_sum);
  const auto header = encode_header(kKey, span_of(kPayload));
  EXPECT_EQ(std::string(header.begin(), header.end()), bytes.substr(0, kHeaderSize));
}

TEST(EntryFormat, EveryShortPrefixIsATruncatedHeader) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  for (std::size_t size = 0; size < kHeaderSize; ++size) {
    EXPECT_EQ(decode_error(bytes.substr(0, size)), EntryError::truncated_header) << size;
  }
}

TEST(EntryFormat, DetectsBadMagic) {
  const std::string good = encode_entry(kKey, span_of(kPayload));
  for (std::size_t at = 0; at < 8; ++at) {
    std::string bytes = good;
    bytes[at] ^= 0x20;
    EXPECT_EQ(decode_error(bytes), EntryError::bad_magic) << at;
  }
}

TEST(EntryFormat, RejectsOtherVersions) {
  for (std::uint32_t version : {0U, 2U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    put_u32(bytes, 8, version);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::unsupported_version) << version;
  }
}

TEST(EntryFormat, RejectsBadHeaderSize) {
  for (std::uint32_t size : {0U, 55U, 57U, 64U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    put_u32(bytes, 12, size);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::bad_header_size) << size;
  }
}

TEST(EntryFormat, DetectsHeaderCorruption) {
  const std::string good = encode_entry(kKey, span_of(kPayload));
  for (std::size_t at = 16; at < kHeaderSize; ++at) {  // key, sizes, sums: all under the header checksum
    std::string bytes = good;
    bytes[at] ^= 0x01;
    EXPECT_EQ(decode_error(bytes), EntryError::header_checksum) << at;
  }
}

TEST(EntryFormat, DetectsAnotherKey) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  EXPECT_EQ(decode_error(bytes, Key{kKey.high, kKey.low ^ 1}), EntryError::key_mismatch);
  EXPECT_EQ(decode_error(bytes, Key{kKey.high ^ 1, kKey.low}), EntryError::key_mismatch);
}

TEST(EntryFormat, DetectsPayloadTooShortOrTooLong) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  EXPECT_EQ(decode_error(bytes.substr(0, bytes.size() - 1)), EntryError::size_mismatch);
  EXPECT_EQ(decode_error(bytes.substr(0, kHeaderSize)), EntryError::size_mismatch);
  EXPECT_EQ(decode_error(bytes + "x"), EntryError::size_mismatch);
}

TEST(EntryFormat, HugeDeclaredSizeDoesNotWrap) {
  for (std::uint64_t size : {~std::uint64_t{0}, ~std::uint64_t{0} - kHeaderSize + 1, std::uint64_t{1} << 63}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    put_u64(bytes, 32, size);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch) << size;
  }
}

TEST(EntryFormat, DetectsEveryPayloadBitFlip) {
  const std::string good = encode_entry(kKey, span_of(kPayload));
  for (std::size_t at = kHeaderSize; at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::payload_checksum) << at << ":" << bit;
    }
  }
}

TEST(EntryFormat, ErrorsHaveDistinctDescriptions) {
  std::set<std::string_view> seen;
  for (EntryError error : {EntryError::none, EntryError::truncated_header, EntryError::bad_magic,
                           EntryError::unsupported_version, EntryError::bad_header_size, EntryError::header_checksum,
                           EntryError::key_mismatch, EntryError::size_mismatch, EntryError::payload_checksum}) {
    EXPECT_FALSE(describe(error).empty());
    EXPECT_TRUE(seen.insert(describe(error)).second) << describe(error);
  }
}

// What the fuzzer will do, in small: nothing decodes garbage, nothing reads
// past the input (run under ASan to see the latter). Each input is a fresh
// allocation of exactly its length, so an over-read leaves the buffer.
TEST(EntryFormat, GarbageOfEveryLengthIsRejected) {
  std::mt19937 rng(7);
  const std::string valid = encode_entry(kKey, span_of(kPayload));
  for (std::size_t size = 0; size <= 200; ++size) {
    for (int round = 0; round < 20; ++round) {
      std::vector<char> bytes(size);
      for (char& c : bytes) c = static_cast<char>(rng());
      // Half the rounds keep a valid prefix, to reach the checks past the magic.
      if (round % 2 == 1 && size > 0) std::memcpy(bytes.data(), valid.data(), std::min(size, std::size_t{16}));
      EXPECT_NE(decode_entry(bytes, kKey).error, EntryError::none) << size;
    }
  }
}

}  // namespace
}  // namespace kiln::cache
