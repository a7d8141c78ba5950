#include "cache/entry_format.hpp"

#include <cstring>

#include <xxhash.h>

#include "cache/little_endian.hpp"

namespace kiln::cache {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'N', 'T', '\0'};

// Field offsets inside the trailer, as in the table in entry_format.hpp.
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kTrailerSizeAt = 12;
constexpr std::size_t kKeyHighAt = 16;
constexpr std::size_t kKeyLowAt = 24;
constexpr std::size_t kMetadataSizeAt = 32;
constexpr std::size_t kMetadataSumAt = 40;
constexpr std::size_t kPayloadSizeAt = 48;
constexpr std::size_t kPayloadSumAt = 56;
constexpr std::size_t kTrailerSumAt = 64;
static_assert(kTrailerSumAt + 8 == kTrailerSize);
static_assert(kVersionAt + 4 == kOlderFormatProbeSize);  // version 2 had magic and version at the same offsets

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

DecodedTrailer failed(EntryError error) {
  DecodedTrailer trailer;
  trailer.error = error;
  return trailer;
}

}  // namespace

std::string_view describe(EntryError error) {
  switch (error) {
    case EntryError::none: return "no error";
    case EntryError::truncated_trailer: return "file shorter than an entry trailer";
    case EntryError::bad_magic: return "not a kiln cache entry (bad magic in the trailer)";
    case EntryError::unsupported_version:
      return "entry format version not supported (an entry of an older or newer kiln)";
    case EntryError::bad_trailer_size: return "unexpected entry trailer size";
    case EntryError::trailer_checksum: return "entry trailer checksum mismatch";
    case EntryError::metadata_too_large: return "entry metadata larger than the limit";
    case EntryError::key_mismatch: return "entry holds another key";
    case EntryError::size_mismatch: return "file size differs from the payload, metadata and trailer sizes";
    case EntryError::metadata_checksum: return "entry metadata checksum mismatch";
    case EntryError::payload_checksum: return "payload checksum mismatch";
  }
  return "unknown entry error";
}

std::array<char, kTrailerSize> encode_trailer(const Key& key, std::span<const char> payload,
                                              std::string_view metadata) {
  std::array<char, kTrailerSize> trailer{};
  char* out = trailer.data();
  std::memcpy(out, kMagic, sizeof kMagic);
  store_le<std::uint32_t>(out + kVersionAt, kFormatVersion);
  store_le<std::uint32_t>(out + kTrailerSizeAt, kTrailerSize);
  store_le<std::uint64_t>(out + kKeyHighAt, key.high);
  store_le<std::uint64_t>(out + kKeyLowAt, key.low);
  store_le<std::uint64_t>(out + kMetadataSizeAt, metadata.size());
  store_le<std::uint64_t>(out + kMetadataSumAt, checksum(metadata.data(), metadata.size()));
  store_le<std::uint64_t>(out + kPayloadSizeAt, payload.size());
  store_le<std::uint64_t>(out + kPayloadSumAt, checksum(payload.data(), payload.size()));
  store_le<std::uint64_t>(out + kTrailerSumAt, checksum(out, kTrailerSumAt));
  return trailer;
}

std::string encode_entry(const Key& key, std::span<const char> payload, std::string_view metadata) {
  const auto trailer = encode_trailer(key, payload, metadata);
  std::string bytes;
  bytes.reserve(payload.size() + metadata.size() + trailer.size());
  bytes.append(payload.data(), payload.size());
  bytes.append(metadata);
  bytes.append(trailer.data(), trailer.size());
  return bytes;
}

DecodedTrailer decode_trailer(std::span<const char> bytes) {
  if (bytes.size() < kTrailerSize) return failed(EntryError::truncated_trailer);
  const char* trailer = bytes.data() + (bytes.size() - kTrailerSize);
  if (std::memcmp(trailer, kMagic, sizeof kMagic) != 0) return failed(EntryError::bad_magic);
  // The version comes before the checksum: a later version may checksum a
  // longer trailer, and "too new" is the more useful answer.
  if (load_le<std::uint32_t>(trailer + kVersionAt) != kFormatVersion) return failed(EntryError::unsupported_version);
  if (load_le<std::uint32_t>(trailer + kTrailerSizeAt) != kTrailerSize) return failed(EntryError::bad_trailer_size);
  if (load_le<std::uint64_t>(trailer + kTrailerSumAt) != checksum(trailer, kTrailerSumAt)) {
    return failed(EntryError::trailer_checksum);
  }
  DecodedTrailer decoded;
  decoded.metadata_size = load_le<std::uint64_t>(trailer + kMetadataSizeAt);
  // Checked here, before any read: a forged size must never become an allocation.
  if (decoded.metadata_size > kMaxMetadataSize) return failed(EntryError::metadata_too_large);
  decoded.key = {load_le<std::uint64_t>(trailer + kKeyHighAt), load_le<std::uint64_t>(trailer + kKeyLowAt)};
  decoded.metadata_sum = load_le<std::uint64_t>(trailer + kMetadataSumAt);
  decoded.payload_size = load_le<std::uint64_t>(trailer + kPayloadSizeAt);
  decoded.payload_sum = load_le<std::uint64_t>(trailer + kPayloadSumAt);
  return decoded;
}

EntryError check_key_and_sizes(const DecodedTrailer& trailer, const Key& expected, std::uint64_t file_size) {
  if (trailer.error != EntryError::none) return trailer.error;
  if (trailer.key != expected) return EntryError::key_mismatch;
  // Only subtractions of what is known to be smaller: a forged payload size
  // near 2^64 cannot wrap into a match.
  if (file_size < kTrailerSize) return EntryError::size_mismatch;
  const std::uint64_t before_trailer = file_size - kTrailerSize;
  if (trailer.metadata_size > before_trailer || before_trailer - trailer.metadata_size != trailer.payload_size) {
    return EntryError::size_mismatch;
  }
  return EntryError::none;
}

EntryError check_metadata(std::string_view metadata, const DecodedTrailer& trailer) {
  if (trailer.error != EntryError::none) return trailer.error;
  if (metadata.size() != trailer.metadata_size) return EntryError::size_mismatch;
  if (checksum(metadata.data(), metadata.size()) != trailer.metadata_sum) return EntryError::metadata_checksum;
  return EntryError::none;
}

bool is_older_format(std::span<const char> first_bytes) {
  if (first_bytes.size() < kOlderFormatProbeSize) return false;
  return std::memcmp(first_bytes.data(), kMagic, sizeof kMagic) == 0 &&
         load_le<std::uint32_t>(first_bytes.data() + kVersionAt) < kFormatVersion;
}

DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected) {
  const DecodedTrailer trailer = decode_trailer(bytes);
  if (trailer.error == EntryError::bad_magic && is_older_format(bytes)) {
    return {EntryError::unsupported_version, {}, {}};
  }
  if (const EntryError error = check_key_and_sizes(trailer, expected, bytes.size()); error != EntryError::none) {
    return {error, {}, {}};
  }
  // Both sizes now fit inside `bytes` (check_key_and_sizes), so neither cast can truncate.
  const auto payload_size = static_cast<std::size_t>(trailer.payload_size);
  const auto metadata_size = static_cast<std::size_t>(trailer.metadata_size);
  const std::string_view metadata(bytes.data() + payload_size, metadata_size);
  if (const EntryError error = check_metadata(metadata, trailer); error != EntryError::none) return {error, {}, {}};
  const std::span<const char> payload = bytes.first(payload_size);
  if (checksum(payload.data(), payload.size()) != trailer.payload_sum) return {EntryError::payload_checksum, {}, {}};
  return {EntryError::none, metadata, payload};
}

}  // namespace kiln::cache
