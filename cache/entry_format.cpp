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
constexpr std::size_t kPayloadSizeAt = 32;
constexpr std::size_t kPayloadSumAt = 40;
constexpr std::size_t kHeaderSumAt = 48;
static_assert(kHeaderSumAt + 8 == kHeaderSize);

std::uint64_t checksum(const char* data, std::size_t size) { return XXH3_64bits(data, size); }

// The fields a v1 reader can check before looking at the key and the payload.
EntryError check_header(const char* header) {
  if (std::memcmp(header, kMagic, sizeof kMagic) != 0) return EntryError::bad_magic;
  // The version comes before the checksum: a later version may checksum a
  // longer header, and "too new" is the more useful answer.
  if (load_le<std::uint32_t>(header + kVersionAt) != kFormatVersion) return EntryError::unsupported_version;
  if (load_le<std::uint32_t>(header + kHeaderSizeAt) != kHeaderSize) return EntryError::bad_header_size;
  if (load_le<std::uint64_t>(header + kHeaderSumAt) != checksum(header, kHeaderSumAt)) {
    return EntryError::header_checksum;
  }
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
    case EntryError::size_mismatch: return "payload size differs from the header";
    case EntryError::payload_checksum: return "payload checksum mismatch";
  }
  return "unknown entry error";
}

std::array<char, kHeaderSize> encode_header(const Key& key, std::span<const char> payload) {
  std::array<char, kHeaderSize> header{};
  char* out = header.data();
  std::memcpy(out, kMagic, sizeof kMagic);
  store_le<std::uint32_t>(out + kVersionAt, kFormatVersion);
  store_le<std::uint32_t>(out + kHeaderSizeAt, kHeaderSize);
  store_le<std::uint64_t>(out + kKeyHighAt, key.high);
  store_le<std::uint64_t>(out + kKeyLowAt, key.low);
  store_le<std::uint64_t>(out + kPayloadSizeAt, payload.size());
  store_le<std::uint64_t>(out + kPayloadSumAt, checksum(payload.data(), payload.size()));
  store_le<std::uint64_t>(out + kHeaderSumAt, checksum(out, kHeaderSumAt));
  return header;
}

std::string encode_entry(const Key& key, std::span<const char> payload) {
  const auto header = encode_header(key, payload);
  std::string bytes;
  bytes.reserve(header.size() + payload.size());
  bytes.append(header.data(), header.size());
  bytes.append(payload.data(), payload.size());
  return bytes;
}

DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected) {
  if (bytes.size() < kHeaderSize) return {EntryError::truncated_header, {}};
  const char* header = bytes.data();
  if (const EntryError error = check_header(header); error != EntryError::none) return {error, {}};
  const Key stored{load_le<std::uint64_t>(header + kKeyHighAt), load_le<std::uint64_t>(header + kKeyLowAt)};
  if (stored != expected) return {EntryError::key_mismatch, {}};
  // Compared as sizes, never added: a forged size near 2^64 cannot wrap.
  const std::span<const char> payload = bytes.subspan(kHeaderSize);
  if (load_le<std::uint64_t>(header + kPayloadSizeAt) != payload.size()) return {EntryError::size_mismatch, {}};
  if (load_le<std::uint64_t>(header + kPayloadSumAt) != checksum(payload.data(), payload.size())) {
    return {EntryError::payload_checksum, {}};
  }
  return {EntryError::none, payload};
}

}  // namespace kiln::cache
