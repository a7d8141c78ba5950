#include "cache/entry_format.hpp"

#include <cstdint>
#include <cstring>
#include <random>
#include <set>
#include <string>

#include <gtest/gtest.h>
#include <xxhash.h>

#include "tests/cache/test_support.hpp"

namespace kiln::cache {
namespace {

const Key kKey{0x1122334455667788ULL, 0x99aabbccddeeff00ULL};
constexpr char kPayloadBytes[] = "\x7f" "ELF an opaque object file\n\x00\x01\x02 with bytes";
const std::string kPayload(kPayloadBytes, sizeof kPayloadBytes - 1);
const std::string kMetadata = R"({"kernel":"k","compile_ms":1.5})";

// Offsets of the fields inside the trailer, as in the table in entry_format.hpp.
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kTrailerSizeAt = 12;
constexpr std::size_t kMetadataSizeAt = 32;
constexpr std::size_t kMetadataSumAt = 40;
constexpr std::size_t kPayloadSizeAt = 48;
constexpr std::size_t kPayloadSumAt = 56;
constexpr std::size_t kTrailerSumAt = 64;

std::span<const char> span_of(const std::string& s) { return {s.data(), s.size()}; }

// Where the trailer of a whole entry starts.
std::size_t trailer_at(const std::string& bytes) { return bytes.size() - kTrailerSize; }

void put_u32(std::string& bytes, std::size_t at, std::uint32_t v) {
  for (int i = 0; i < 4; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

void put_u64(std::string& bytes, std::size_t at, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) bytes[at + i] = static_cast<char>((v >> (8 * i)) & 0xff);
}

// A trailer field of a whole entry, set; `field_at` is the offset inside the trailer.
void set_u32(std::string& bytes, std::size_t field_at, std::uint32_t v) {
  put_u32(bytes, trailer_at(bytes) + field_at, v);
}
void set_u64(std::string& bytes, std::size_t field_at, std::uint64_t v) {
  put_u64(bytes, trailer_at(bytes) + field_at, v);
}

// A forged trailer still passes its own checksum, so the field itself is what is tested.
void reseal_trailer(std::string& bytes) {
  set_u64(bytes, kTrailerSumAt, XXH3_64bits(bytes.data() + trailer_at(bytes), kTrailerSumAt));
}

std::string with_metadata() { return encode_entry(kKey, span_of(kPayload), kMetadata); }

EntryError decode_error(const std::string& bytes, const Key& key = kKey) {
  return decode_entry(span_of(bytes), key).error;
}

// What read_metadata() does with an entry's last bytes: trailer, key, sizes, metadata.
EntryError tail_error(const std::string& bytes, const Key& key = kKey) {
  const DecodedTrailer trailer = decode_trailer(span_of(bytes));
  if (const EntryError error = check_key_and_sizes(trailer, key, bytes.size()); error != EntryError::none) return error;
  const auto metadata_at = static_cast<std::size_t>(trailer.payload_size);
  return check_metadata(std::string_view(bytes).substr(metadata_at, trailer.metadata_size), trailer);
}

TEST(EntryFormat, RoundTrips) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  ASSERT_EQ(bytes.size(), kPayload.size() + kTrailerSize);
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  ASSERT_EQ(decoded.error, EntryError::none) << describe(decoded.error);
  EXPECT_EQ(std::string(decoded.payload.begin(), decoded.payload.end()), kPayload);
  EXPECT_EQ(decoded.payload.data(), bytes.data()) << "the payload is the entry's first bytes";
}

TEST(EntryFormat, EmptyPayloadRoundTrips) {
  const std::string bytes = encode_entry(kKey, {});
  EXPECT_EQ(bytes.size(), kTrailerSize);
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  EXPECT_EQ(decoded.error, EntryError::none);
  EXPECT_TRUE(decoded.payload.empty());
}

TEST(EntryFormat, MetadataRoundTripsBetweenPayloadAndTrailer) {
  const std::string bytes = with_metadata();
  ASSERT_EQ(bytes.size(), kPayload.size() + kMetadata.size() + kTrailerSize);
  EXPECT_EQ(bytes.substr(0, kPayload.size()), kPayload);
  EXPECT_EQ(bytes.substr(kPayload.size(), kMetadata.size()), kMetadata);
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

TEST(EntryFormat, LayoutIsAsDocumented) {
  const std::string bytes = with_metadata();
  const std::size_t t = trailer_at(bytes);
  ASSERT_EQ(t, kPayload.size() + kMetadata.size());
  EXPECT_EQ(bytes.substr(0, 4), "\x7f" "ELF") << "payload at offset 0, as a loader wants it";
  EXPECT_EQ(bytes.substr(t, 8), std::string("KILNENT\0", 8));
  EXPECT_EQ(bytes.substr(t + 8, 4), std::string("\x03\0\0\0", 4));
  EXPECT_EQ(bytes.substr(t + 12, 4), std::string("\x48\0\0\0", 4));  // 72
  EXPECT_EQ(bytes.substr(t + 16, 8), std::string("\x88\x77\x66\x55\x44\x33\x22\x11", 8));
  EXPECT_EQ(bytes.substr(t + 24, 8), std::string("\x00\xff\xee\xdd\xcc\xbb\xaa\x99", 8));
  EXPECT_EQ(bytes.substr(t + kMetadataSizeAt, 8), le64(kMetadata.size()));
  EXPECT_EQ(bytes.substr(t + kMetadataSumAt, 8), le64(XXH3_64bits(kMetadata.data(), kMetadata.size())));
  EXPECT_EQ(bytes.substr(t + kPayloadSizeAt, 8), le64(kPayload.size()));
  EXPECT_EQ(bytes.substr(t + kPayloadSumAt, 8), le64(XXH3_64bits(kPayload.data(), kPayload.size())));
  EXPECT_EQ(bytes.substr(t + kTrailerSumAt, 8), le64(XXH3_64bits(bytes.data() + t, kTrailerSumAt)));
  const auto trailer = encode_trailer(kKey, span_of(kPayload), kMetadata);
  EXPECT_EQ(std::string(trailer.begin(), trailer.end()), bytes.substr(t));
}

TEST(EntryFormat, EveryShortInputIsATruncatedTrailer) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  for (std::size_t size = 0; size < kTrailerSize; ++size) {
    EXPECT_EQ(decode_error(bytes.substr(bytes.size() - size)), EntryError::truncated_trailer) << size;
    EXPECT_EQ(decode_error(bytes.substr(0, size)), EntryError::truncated_trailer) << size;
    EXPECT_EQ(decode_trailer(span_of(bytes).last(size)).error, EntryError::truncated_trailer) << size;
  }
}

TEST(EntryFormat, DetectsBadMagic) {
  const std::string good = encode_entry(kKey, span_of(kPayload));
  for (std::size_t at = 0; at < 8; ++at) {
    std::string bytes = good;
    bytes[trailer_at(bytes) + at] ^= 0x20;
    EXPECT_EQ(decode_error(bytes), EntryError::bad_magic) << at;
  }
}

TEST(EntryFormat, RejectsOtherVersions) {
  for (std::uint32_t version : {0U, 1U, 2U, 4U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    set_u32(bytes, kVersionAt, version);
    reseal_trailer(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::unsupported_version) << version;
  }
}

// A version-2 file (header first): no trailer at its end, but its first bytes
// say what it is, so the answer is "another version", not "bad magic".
TEST(EntryFormat, OlderFormatIsAnUnsupportedVersion) {
  for (const std::string& entry : {with_metadata(), encode_entry(kKey, span_of(kPayload)), encode_entry(kKey, {})}) {
    const std::string older = testing::older_format_of(entry);
    ASSERT_EQ(older.size(), entry.size());
    EXPECT_TRUE(is_older_format(span_of(older)));
    EXPECT_FALSE(is_older_format(span_of(entry)));
    EXPECT_EQ(decode_error(older), EntryError::unsupported_version) << older.size();
  }
  // Not our magic at offset 0, or not an older version: plain bad magic.
  std::string older = testing::older_format_of(with_metadata());
  EXPECT_FALSE(is_older_format(span_of(older).first(kOlderFormatProbeSize - 1)));
  put_u32(older, kVersionAt, kFormatVersion);
  EXPECT_FALSE(is_older_format(span_of(older)));
  EXPECT_EQ(decode_error(older), EntryError::bad_magic);
  older[0] ^= 1;
  put_u32(older, kVersionAt, 2);
  EXPECT_EQ(decode_error(older), EntryError::bad_magic);
}

// The older-format probe runs only on a bad trailer: a payload that happens
// to start like a version-2 header is still just a payload.
TEST(EntryFormat, PayloadLookingLikeAnOlderEntryDecodes) {
  const std::string older = testing::older_format_of(with_metadata());
  const std::string bytes = encode_entry(kKey, span_of(older), kMetadata);
  const DecodedEntry decoded = decode_entry(span_of(bytes), kKey);
  ASSERT_EQ(decoded.error, EntryError::none) << describe(decoded.error);
  EXPECT_EQ(std::string(decoded.payload.begin(), decoded.payload.end()), older);
}

TEST(EntryFormat, RejectsBadTrailerSize) {
  for (std::uint32_t size : {0U, 56U, 71U, 73U, 128U, 0xffffffffU}) {
    std::string bytes = encode_entry(kKey, span_of(kPayload));
    set_u32(bytes, kTrailerSizeAt, size);
    reseal_trailer(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::bad_trailer_size) << size;
  }
}

TEST(EntryFormat, DetectsTrailerCorruption) {
  const std::string good = with_metadata();
  for (std::size_t at = 16; at < kTrailerSize; ++at) {  // key, sizes, sums: all under the trailer checksum
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[trailer_at(bytes) + at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::trailer_checksum) << at << ":" << bit;
      EXPECT_EQ(tail_error(bytes), EntryError::trailer_checksum) << at << ":" << bit;
    }
  }
}

TEST(EntryFormat, DetectsAnotherKey) {
  const std::string bytes = encode_entry(kKey, span_of(kPayload));
  EXPECT_EQ(decode_error(bytes, Key{kKey.high, kKey.low ^ 1}), EntryError::key_mismatch);
  EXPECT_EQ(decode_error(bytes, Key{kKey.high ^ 1, kKey.low}), EntryError::key_mismatch);
  EXPECT_EQ(tail_error(bytes, Key{kKey.high, kKey.low ^ 1}), EntryError::key_mismatch);
}

// The trailer is found from the end: bytes lost or added before it leave it
// intact, and the sizes tell. (A cut at the end leaves no trailer: bad magic.)
TEST(EntryFormat, DetectsBytesMissingOrAddedBeforeTheTrailer) {
  const std::string good = with_metadata();
  EXPECT_EQ(decode_error(good.substr(1)), EntryError::size_mismatch);
  EXPECT_EQ(decode_error("x" + good), EntryError::size_mismatch);
  EXPECT_EQ(decode_error(good.substr(kPayload.size())), EntryError::size_mismatch) << "metadata and trailer only";
  EXPECT_EQ(decode_error(good.substr(trailer_at(good))), EntryError::size_mismatch) << "the trailer alone";
  std::string inserted = good;
  inserted.insert(inserted.begin() + static_cast<std::ptrdiff_t>(kPayload.size()), 'm');
  EXPECT_EQ(decode_error(inserted), EntryError::size_mismatch);
  EXPECT_EQ(decode_error(good.substr(0, good.size() - 1)), EntryError::bad_magic);
  EXPECT_EQ(decode_error(good + "x"), EntryError::bad_magic);
}

// Forged sizes near 2^64, or larger than the file: compared, never summed, so
// nothing wraps into a match or an out-of-bounds view.
TEST(EntryFormat, HugeDeclaredSizesDoNotWrap) {
  const std::string good = with_metadata();
  for (std::uint64_t size : {~std::uint64_t{0}, ~std::uint64_t{0} - kTrailerSize + 1,
                             ~std::uint64_t{0} - kTrailerSize - kMetadata.size() + 1, std::uint64_t{1} << 63,
                             std::uint64_t{good.size()}}) {
    std::string bytes = good;
    set_u64(bytes, kPayloadSizeAt, size);
    reseal_trailer(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch) << size;
    EXPECT_EQ(tail_error(bytes), EntryError::size_mismatch) << size;
  }
  // Metadata within the limit but longer than the file holds.
  const std::string small = encode_entry(kKey, {}, "m");
  for (std::uint64_t size : {std::uint64_t{2}, std::uint64_t{kMaxMetadataSize}}) {
    std::string bytes = small;
    set_u64(bytes, kMetadataSizeAt, size);
    set_u64(bytes, kPayloadSizeAt, ~std::uint64_t{0} - size + 2);  // P + M wraps to the 1 byte there is
    reseal_trailer(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch) << size;
    EXPECT_EQ(tail_error(bytes), EntryError::size_mismatch) << size;
  }
}

TEST(EntryFormat, DetectsEveryPayloadBitFlip) {
  const std::string good = with_metadata();
  for (std::size_t at = 0; at < kPayload.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::payload_checksum) << at << ":" << bit;
      EXPECT_EQ(tail_error(bytes), EntryError::none) << "the tail alone cannot see the payload";
    }
  }
}

TEST(EntryFormat, DetectsEveryMetadataBitFlip) {
  const std::string good = with_metadata();
  for (std::size_t at = kPayload.size(); at < kPayload.size() + kMetadata.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_EQ(decode_error(bytes), EntryError::metadata_checksum) << at << ":" << bit;
      EXPECT_EQ(tail_error(bytes), EntryError::metadata_checksum) << at << ":" << bit;
    }
  }
}

// Every single-bit flip anywhere in the file, trailer included, is an error.
TEST(EntryFormat, DetectsEveryBitFlipAnywhere) {
  const std::string good = with_metadata();
  for (std::size_t at = 0; at < good.size(); ++at) {
    for (int bit = 0; bit < 8; ++bit) {
      std::string bytes = good;
      bytes[at] ^= static_cast<char>(1 << bit);
      EXPECT_NE(decode_error(bytes), EntryError::none) << at << ":" << bit;
    }
  }
}

// A resealed trailer declaring huge metadata is refused before anything is
// read or allocated for it; the limit itself is accepted.
TEST(EntryFormat, RejectsMetadataOverTheLimit) {
  for (std::uint64_t size : {std::uint64_t{kMaxMetadataSize} + 1, std::uint64_t{1} << 40, ~std::uint64_t{0}}) {
    std::string bytes = with_metadata();
    set_u64(bytes, kMetadataSizeAt, size);
    reseal_trailer(bytes);
    EXPECT_EQ(decode_error(bytes), EntryError::metadata_too_large) << size;
    EXPECT_EQ(decode_trailer(span_of(bytes)).error, EntryError::metadata_too_large) << size;
  }
  const std::string largest(kMaxMetadataSize, 'm');
  const std::string bytes = encode_entry(kKey, span_of(kPayload), largest);
  EXPECT_EQ(decode_entry(span_of(bytes), kKey).metadata, largest);
}

TEST(EntryFormat, DeclaredSizesDecideWhereTheMetadataStarts) {
  // One byte more metadata declared than written: the sizes no longer add up.
  std::string bytes = with_metadata();
  set_u64(bytes, kMetadataSizeAt, kMetadata.size() + 1);
  reseal_trailer(bytes);
  EXPECT_EQ(decode_error(bytes), EntryError::size_mismatch);
  // ...and one byte less payload, the metadata summed from one byte earlier:
  // the sizes add up and the metadata checks, so the payload's sum is what fails.
  set_u64(bytes, kPayloadSizeAt, kPayload.size() - 1);
  set_u64(bytes, kMetadataSumAt, XXH3_64bits(bytes.data() + kPayload.size() - 1, kMetadata.size() + 1));
  reseal_trailer(bytes);
  EXPECT_EQ(decode_error(bytes), EntryError::payload_checksum);
}

TEST(EntryFormat, DecodeTrailerReadsTheLastBytes) {
  const std::string bytes = with_metadata();
  for (std::span<const char> input : {span_of(bytes), span_of(bytes).last(kTrailerSize), span_of(bytes).last(100)}) {
    const DecodedTrailer trailer = decode_trailer(input);
    ASSERT_EQ(trailer.error, EntryError::none) << describe(trailer.error);
    EXPECT_EQ(trailer.key, kKey);
    EXPECT_EQ(trailer.metadata_size, kMetadata.size());
    EXPECT_EQ(trailer.metadata_sum, XXH3_64bits(kMetadata.data(), kMetadata.size()));
    EXPECT_EQ(trailer.payload_size, kPayload.size());
    EXPECT_EQ(trailer.payload_sum, XXH3_64bits(kPayload.data(), kPayload.size()));
  }
  EXPECT_EQ(decode_trailer(span_of(bytes).last(kTrailerSize - 1)).error, EntryError::truncated_trailer);
  std::string flipped = bytes;
  flipped[trailer_at(bytes) + 20] ^= 1;
  EXPECT_EQ(decode_trailer(span_of(flipped)).error, EntryError::trailer_checksum);
}

TEST(EntryFormat, CheckKeyAndSizes) {
  const std::string bytes = with_metadata();
  const DecodedTrailer trailer = decode_trailer(span_of(bytes));
  EXPECT_EQ(check_key_and_sizes(trailer, kKey, bytes.size()), EntryError::none);
  EXPECT_EQ(check_key_and_sizes(trailer, Key{kKey.high, ~kKey.low}, bytes.size()), EntryError::key_mismatch);
  for (std::uint64_t size : {std::uint64_t{0}, std::uint64_t{kTrailerSize - 1}, std::uint64_t{kTrailerSize},
                             std::uint64_t{bytes.size() - 1}, std::uint64_t{bytes.size() + 1}, ~std::uint64_t{0}}) {
    EXPECT_EQ(check_key_and_sizes(trailer, kKey, size), EntryError::size_mismatch) << size;
  }
  // A trailer that did not decode keeps its error.
  DecodedTrailer bad;
  bad.error = EntryError::trailer_checksum;
  EXPECT_EQ(check_key_and_sizes(bad, kKey, bytes.size()), EntryError::trailer_checksum);
}

TEST(EntryFormat, CheckMetadata) {
  const DecodedTrailer trailer = decode_trailer(span_of(with_metadata()));
  EXPECT_EQ(check_metadata(kMetadata, trailer), EntryError::none);
  EXPECT_EQ(check_metadata(std::string_view(kMetadata).substr(1), trailer), EntryError::size_mismatch);
  EXPECT_EQ(check_metadata(kMetadata + "}", trailer), EntryError::size_mismatch);
  std::string flipped = kMetadata;
  flipped[3] ^= 1;
  EXPECT_EQ(check_metadata(flipped, trailer), EntryError::metadata_checksum);
  EXPECT_EQ(check_metadata("", decode_trailer(span_of(encode_entry(kKey, span_of(kPayload))))), EntryError::none);
}

TEST(EntryFormat, ErrorsHaveDistinctDescriptions) {
  std::set<std::string_view> seen;
  for (EntryError error : {EntryError::none, EntryError::truncated_trailer, EntryError::bad_magic,
                           EntryError::unsupported_version, EntryError::bad_trailer_size, EntryError::trailer_checksum,
                           EntryError::metadata_too_large, EntryError::key_mismatch, EntryError::size_mismatch,
                           EntryError::metadata_checksum, EntryError::payload_checksum}) {
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
  const std::string old = testing::older_format_of(valid);
  for (std::size_t size = 0; size <= 200; ++size) {
    for (int round = 0; round < 30; ++round) {
      std::vector<char> bytes(size);
      for (char& c : bytes) c = static_cast<char>(rng());
      // Some rounds keep a valid trailer start at the end (to reach the checks
      // past the magic) or an older header at the front.
      if (round % 3 == 1 && size >= kTrailerSize) {
        std::memcpy(bytes.data() + size - kTrailerSize, valid.data() + trailer_at(valid), 16);
      }
      if (round % 3 == 2 && size > 0) std::memcpy(bytes.data(), old.data(), std::min(size, std::size_t{16}));
      EXPECT_NE(decode_entry(bytes, kKey).error, EntryError::none) << size;
      const DecodedTrailer trailer = decode_trailer(bytes);
      EXPECT_NE(check_key_and_sizes(trailer, kKey, bytes.size()), EntryError::none) << size;
    }
  }
}

}  // namespace
}  // namespace kiln::cache
