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
const std::string kMetadata = R"({"kernel":"k","compile_ms":1.5})";

// Offsets of the fields, as in the table in entry_format.hpp.
constexpr std::size_t kMetadataSizeAt = 32;
constexpr std::size_t kMetadataSumAt = 40;
constexpr std::size_t kPayloadSizeAt = 48;
constexpr std::size_t kPayloadSumAt = 56;
constexpr std::size_t kHeaderSumAt = 64;

std::span<const char> span_of(const std::string& s) { return {s.data(), s.size()}; }

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_u64(std::string& bytes, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A forged header still passes its own checksum, so the field itself is what is tested.
void reseal_header(std::string& bytes) { put_u64(bytes, kHeaderSumAt, XXH3_64bits(bytes.data(), kHeaderSumAt)); }

std::string with_metadata() { return encode_entry(kKey, span_of(kPayload), kMetadata); }

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

TEST(EntryFormat, MetadataRoundTripsBetweenHeaderAndPayload) {
  const std::string bytes = with_metadata();
  ASSERT_EQ(bytes.size(), kHeaderSize + kMetadata.size() + kPayload.size());
  EXPECT_EQ(bytes.substr(kHeaderSize, kMetadata.size()), kMetadata);
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  ASSERT_EQ(decoded.error, EntryError::none) << describe(decoded.error);
  EXPECT_EQ(decoded.metadata, kMetadata);
  EXPECT_EQ(std::string(decoded.payload.begin(), decoded.payload.end()), kPayload);
}

std::string le64(std::uint64_t v) {
  std::string bytes(8, '\0');
  put_u64(bytes, 0, v);
  return bytes;
}

TEST(EntryFormat, HeaderLayoutIsAsDocumented) {
  const std::string bytes = with_metadata();
  EXPECT_EQ(bytes.substr(0, 8), std::string("KILNENT\0", 8));
  EXPECT_EQ(bytes.substr(8, 4), std::string("\x02\0\0\0", 4));
  EXPECT_EQ(bytes.substr(12, 4), std::string("\x48\0\0\0", 4));  // 72
  EXPECT_EQ(bytes.substr(16, 8), std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8));
  EXPECT_EQ(bytes.substr(24, 8), std::string("\x00\xff\xee\xdd\xcc\xbb\xaa\x99", 8));
  EXPECT_EQ(bytes.substr(kMetadataSizeAt, 8), le64(kMetadata.size()));
  EXPECT_EQ(bytes.substr(kMetadataSumAt, 8), le64(XXH3_64bits(kMetadata.data(), kMetadata.size())));
  EXPECT_EQ(bytes.substr(kPayloadSizeAt, 8), le64(kPayload.size()));
  EXPECT_EQ(bytes.substr(kPayloadSumAt, 8), le64(XXH3_64bits(kPayload.data(), kPayload.size())));
  EXPECT_EQ(bytes.substr(kHeaderSumAt, 8), le64(XXH3_64bits(bytes.data(), kHeaderSumAt)));
  const auto header = encode_header(kKey, span_of(kPayload), kMetadata);
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
  for (std::uint32_t version : {0U, 1U, 3U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    put_u32(bytes, 8, version);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::unsupported_version) << version;
  }
}

TEST(EntryFormat, RejectsBadHeaderSize) {
  for (std::uint32_t size : {0U, 56U, 71U, 73U, 128U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    put_u32(bytes, 12, size);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::bad_header_size) << size;
  }
}

TEST(EntryFormat, DetectsHeaderCorruption) {
  const std::string good = with_metadata();
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
    put_u64(bytes, kPayloadSizeAt, size);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch) << size;
  }
}

TEST(EntryFormat, DetectsEveryPayloadBitFlip) {
  const std::string good = with_metadata();
  for (std::size_t at = kHeaderSize + kMetadata.size(); at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::payload_checksum) << at << ":" << bit;
    }
  }
}

TEST(EntryFormat, DetectsEveryMetadataBitFlip) {
  const std::string good = with_metadata();
  for (std::size_t at = kHeaderSize; at < kHeaderSize + kMetadata.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::metadata_checksum) << at << ":" << bit;
      EXPECT_EQ(decode_head(span_of(bytes), kKey).error, EntryError::metadata_checksum) << at << ":" << bit;
    }
  }
}

TEST(EntryFormat, FileCutInsideTheMetadataIsTruncatedMetadata) {
  const std::string good = with_metadata();
  for (std::size_t size = kHeaderSize; size < kHeaderSize + kMetadata.size(); ++size) {
    EXPECT_EQ(decode_error(good.substr(0, size)), EntryError::truncated_metadata) << size;
    EXPECT_EQ(decode_head(span_of(good.substr(0, size)), kKey).error, EntryError::truncated_metadata) << size;
  }
}

// A resealed header declaring huge metadata is refused before anything is
// read or allocated for it; the limit itself is accepted.
TEST(EntryFormat, RejectsMetadataOverTheLimit) {
  for (std::uint64_t size : {std::uint64_t{kMaxMetadataSize} + 1, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    std::string bytes = with_metadata();
    put_u64(bytes, kMetadataSizeAt, size);
    reseal_header(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::metadata_too_large) << size;
    EXPECT_EQ(head_size(span_of(bytes)).error, EntryError::metadata_too_large) << size;
  }
  const std::string largest(kMaxMetadataSize, 'm');
  const std::string bytes = encode_entry(kKey, span_of(kPayload), largest);
  EXPECT_EQ(decode_entry(span_of(bytes), kKey).metadata, largest);
}

TEST(EntryFormat, MetadataSizeDecidesWhereThePayloadStarts) {
  // One byte more metadata declared (and summed) than written: the payload's
  // first byte is taken as metadata, so the payload is one byte short.
  std::string bytes = with_metadata();
  put_u64(bytes, kMetadataSizeAt, kMetadata.size() + 1);
  put_u64(bytes, kMetadataSumAt, XXH3_64bits(bytes.data() + kHeaderSize, kMetadata.size() + 1));
  reseal_header(bytes);
  EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch);
}

TEST(EntryFormat, HeadSizeIsHeaderPlusMetadata) {
  const std::string bytes = with_metadata();
  const HeadSize size = head_size(span_of(bytes).first(kHeaderSize));
  ASSERT_EQ(size.error, EntryError::none) << describe(size.error);
  EXPECT_EQ(size.bytes, kHeaderSize + kMetadata.size());
  EXPECT_EQ(head_size(span_of(bytes).first(kHeaderSize - 1)).error, EntryError::truncated_header);
  std::string flipped = bytes;
  flipped[20] ^= 1;
  EXPECT_EQ(head_size(span_of(flipped)).error, EntryError::header_checksum);
}

TEST(EntryFormat, DecodeHeadNeedsOnlyHeaderAndMetadata) {
  const std::string bytes = with_metadata();
  const DecodedHead head = decode_head(span_of(bytes).first(kHeaderSize + kMetadata.size()), kKey);
  ASSERT_EQ(head.error, EntryError::none) << describe(head.error);
  EXPECT_EQ(head.metadata, kMetadata);
  EXPECT_EQ(head.payload_size, kPayload.size());
  // The payload is not its business: a damaged one still gives the head.
  std::string damaged = bytes;
  damaged.back() ^= 1;
  EXPECT_EQ(decode_head(span_of(damaged), kKey).error, EntryError::none);
  EXPECT_EQ(decode_head(span_of(bytes), Key{kKey.high, kKey.low ^ 1}).error, EntryError::key_mismatch);
}

TEST(EntryFormat, ErrorsHaveDistinctDescriptions) {
  std::set<std::string_view> seen;
  for (EntryError error : {EntryError::none, EntryError::truncated_header, EntryError::bad_magic,
                           EntryError::unsupported_version, EntryError::bad_header_size, EntryError::header_checksum,
                           EntryError::key_mismatch, EntryError::metadata_too_large, EntryError::truncated_metadata,
                           EntryError::metadata_checksum, EntryError::size_mismatch, EntryError::payload_checksum}) {
    EXPECT_FALSE(describe(error).empty());
    EXPECT_TRUE(seen.insert(describe(error)).second) << describe(error);
  }
}

// What the fuzzer will do, in small: nothing decodes garbage, nothing reads
// past the input (run under ASan to see the latter). Each input is a fresh
// allocation of exactly its length, so an over-read leaves the buffer.
TEST(EntryFormat, GarbageOfEveryLengthIsRejected) {
  std::mt19937 rng(7);
  const std::string valid = with_metadata();
  for (std::size_t size = 0; size <= 200; ++size) {
    for (int round = 0; round < 20; ++round) {
      std::vector<char> bytes(size);
      for (char& c : bytes) c = static_cast<char>(rng());
      // Half the rounds keep a valid prefix, to reach the checks past the magic.
      if (round % 2 == 1 && size > 0) std::memcpy(bytes.data(), valid.data(), std::min(size, std::size_t{16}));
      EXPECT_NE(decode_entry(bytes, kKey).error, EntryError::none) << size;
      EXPECT_NE(decode_head(bytes, kKey).error, EntryError::none) << size;
    }
  }
}

}  // namespace
}  // namespace kiln::cache
