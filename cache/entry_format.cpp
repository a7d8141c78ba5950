#include "cache/entry_format.hpp"

#include <cstring>

#include <xxhash.h>

#include "cache/little_endian.hpp"

namespace kiln::cache {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'E', 'N', 'T', '\0'};

// Field offsets, as in the table in entry_format.hpp.
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kHeaderSizeAt = 12;
constexpr std::size_t kKeyHighAt = 16;
constexpr std::size_t kKeyLowAt = 24;
constexpr std::size_t kMetadataSizeAt = 32;
constexpr std::size_t kMetadataSumAt = 40;
constexpr std::size_t kPayloadSizeAt = 48;
constexpr std::size_t kPayloadSumAt = 56;
constexpr std::size_t kHeaderSumAt = 64;
static_assert(kHeaderSumAt + 8 == kHeaderSize);

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

// The fields that must hold before any other field means anything. The
// caller has checked that `header` holds kHeaderSize bytes.
EntryError check_header(const char* header) {
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0) return EntryError::bad_magic;
  // The version comes before the checksum: a later version may checksum a
  // longer header, and "too new" is the more useful answer.
  if (load_le<std::uint32_t>(header + kVersionAt) != kFormatVersion) return EntryError::unsupported_version;
  if (load_le<std::uint32_t>(header + kHeaderSizeAt) != kHeaderSize) return EntryError::bad_header_size;
  if (load_le<std::uint64_t>(header + kHeaderSumAt) != checksum(header, kHeaderSumAt)) {
    return EntryError::header_checksum;
  }
  // Checked here rather than at the read: a forged size must never become an allocation.
  if (load_le<std::uint64_t>(header + kMetadataSizeAt) > kMaxMetadataSize) return EntryError::metadata_too_large;
  return EntryError::none;
}

Key stored_key(const char* header) {
  return {load_le<std::uint64_t>(header + kKeyHighAt), load_le<std::uint64_t>(header + kKeyLowAt)};
}

// Header, key and metadata: what decode_head() and decode_entry() share.
// On success `metadata` points at the metadata inside `bytes`.
EntryError check_head(std::span<const char> bytes, const Key& expected, std::string_view& metadata) {
  if (bytes.size() < kHeaderSize) return EntryError::truncated_header;
  const char* header = bytes.data();
  if (const EntryError error = check_header(header); error != EntryError::none) return error;
  if (stored_key(header) != expected) return EntryError::key_mismatch;
  // At most kMaxMetadataSize (check_header), so neither the cast nor the sum can wrap.
  const auto size = static_cast<std::size_t>(load_le<std::uint64_t>(header + kMetadataSizeAt));
  if (bytes.size() - kHeaderSize < size) return EntryError::truncated_metadata;
  if (load_le<std::uint64_t>(header + kMetadataSumAt) != checksum(header + kHeaderSize, size)) {
    return EntryError::metadata_checksum;
  }
  metadata = {header + kHeaderSize, size};
  return EntryError::none;
}

}  // namespace

std::string_view describe(EntryError error) {
  switch (error) {
    case EntryError::none: return "no error";
    case EntryError::truncated_header: return "file shorter than an entry header";
    case EntryError::bad_magic: return "not a kiln cache entry (bad magic)";
    case EntryError::unsupported_version: return "entry format version not supported";
    case EntryError::bad_header_size: return "unexpected entry header size";
    case EntryError::header_checksum: return "entry header checksum mismatch";
    case EntryError::key_mismatch: return "entry holds another key";
    case EntryError::metadata_too_large: return "entry metadata larger than the limit";
    case EntryError::truncated_metadata: return "file shorter than its header and metadata";
    case EntryError::metadata_checksum: return "entry metadata checksum mismatch";
    case EntryError::size_mismatch: return "payload size differs from the header";
    case EntryError::payload_checksum: return "payload checksum mismatch";
  }
  return "unknown entry error";
}

std::array<char, kHeaderSize> encode_header(const Key& key, std::span<const char> payload,
                                            std::string_view metadata) {
  std::array<char, kHeaderSize> header{};
  char* out = header.data();
  std::memcpy(out, kMagic, sizeof kMagic);
  store_le<std::uint32_t>(out + kVersionAt, kFormatVersion);
  store_le<std::uint32_t>(out + kHeaderSizeAt, kHeaderSize);
  store_le<std::uint64_t>(out + kKeyHighAt, key.high);
  store_le<std::uint64_t>(out + kKeyLowAt, key.low);
  store_le<std::uint64_t>(out + kMetadataSizeAt, metadata.size());
  store_le<std::uint64_t>(out + kMetadataSumAt, checksum(metadata.data(), metadata.size()));
  store_le<std::uint64_t>(out + kPayloadSizeAt, payload.size());
  store_le<std::uint64_t>(out + kPayloadSumAt, checksum(payload.data(), payload.size()));
  store_le<std::uint64_t>(out + kHeaderSumAt, checksum(out, kHeaderSumAt));
  return header;
}

std::string encode_entry(const Key& key, std::span<const char> payload, std::string_view metadata) {
  const auto header = encode_header(key, payload, metadata);
  std::string bytes;
  bytes.reserve(header.size() + metadata.size() + payload.size());
  bytes.append(header.data(), header.size());
  bytes.append(metadata);
  bytes.append(payload.data(), payload.size());
  return bytes;
}

DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected) {
  std::string_view metadata;
  if (const EntryError error = check_head(bytes, expected, metadata); error != EntryError::none) return {error, {}, {}};
  // Compared as sizes, never added: a forged size near 2^64 cannot wrap.
  const std::span<const char> payload = bytes.subspan(kHeaderSize + metadata.size());
  if (load_le<std::uint64_t>(bytes.data() + kPayloadSizeAt) != payload.size()) {
    return {EntryError::size_mismatch, {}, {}};
  }
  if (load_le<std::uint64_t>(bytes.data() + kPayloadSumAt) != checksum(payload.data(), payload.size())) {
    return {EntryError::payload_checksum, {}, {}};
  }
  return {EntryError::none, metadata, payload};
}

HeadSize head_size(std::span<const char> header) {
  if (header.size() < kHeaderSize) return {EntryError::truncated_header, 0};
  if (const EntryError error = check_header(header.data()); error != EntryError::none) return {error, 0};
  const auto metadata_size = static_cast<std::size_t>(load_le<std::uint64_t>(header.data() + kMetadataSizeAt));
  return {EntryError::none, kHeaderSize + metadata_size};
}

DecodedHead decode_head(std::span<const char> bytes, const Key& expected) {
  std::string_view metadata;
  if (const EntryError error = check_head(bytes, expected, metadata); error != EntryError::none) return {error, {}, 0};
  return {EntryError::none, metadata, load_le<std::uint64_t>(bytes.data() + kPayloadSizeAt)};
}

}  // namespace kiln::cache
