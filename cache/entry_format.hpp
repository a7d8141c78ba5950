// The on-disk entry format: a fixed header, then the payload.
//
//   offset size  field
//   0      8     magic "KILNENT\0"
//   8      4     format version (little endian), kFormatVersion
//   12     4     header size in bytes (kHeaderSize), so later versions can grow it
//   16     16    key (high word, then low word, little endian)
//   32     8     payload size in bytes
//   40     8     XXH3-64 of the payload
//   48     8     XXH3-64 of bytes [0, 48) of the header
//   56     ...   payload
//
// decode_entry() trusts nothing: it is the parser of untrusted bytes (a fuzz
// target later), and every way a file can be wrong has its own error.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cache/key.hpp"

namespace kiln::cache {

inline constexpr std::uint32_t kFormatVersion = 1;
inline constexpr std::size_t kHeaderSize = 56;

enum class EntryError {
  none,
  truncated_header,   // fewer bytes than a header
  bad_magic,
  unsupported_version,
  bad_header_size,
  header_checksum,
  key_mismatch,       // the file holds another key than the one asked for
  size_mismatch,      // payload shorter or longer than the header says
  payload_checksum,
};

std::string_view describe(EntryError error);

// The header alone, for writers that send the payload from where it lies
// instead of copying it behind the header.
std::array<char, kHeaderSize> encode_header(const Key& key, std::span<const char> payload);

// Header + payload, ready to be written.
std::string encode_entry(const Key& key, std::span<const char> payload);

struct DecodedEntry {
  EntryError error = EntryError::none;
  std::span<const char> payload;  // points into the input bytes; empty on error
};

// Checks every header field and the payload checksum against `expected`.
DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected);

}  // namespace kiln::cache
