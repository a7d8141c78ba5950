// The on-disk entry format: a fixed header, the metadata, then the payload.
//
//   offset size  field
//   0      8     magic "KILNENT\0"
//   8      4     format version (little endian), kFormatVersion
//   12     4     header size in bytes (kHeaderSize), so later versions can grow it
//   16     16    key (high word, then low word, little endian)
//   32     8     metadata size in bytes, at most kMaxMetadataSize
//   40     8     XXH3-64 of the metadata
//   48     8     payload size in bytes
//   56     8     XXH3-64 of the payload
//   64     8     XXH3-64 of bytes [0, 64) of the header
//   72     ...   metadata (opaque to this layer), then the payload
//
// The metadata comes before the payload so that a reader can check an entry's
// header and metadata from its first bytes alone (decode_head), without
// reading the payload: the index rebuild reads thousands of entries that way.
//
// decode_entry() and decode_head() trust nothing: they parse untrusted bytes
// (tests/fuzz/entry_fuzz.cpp), and every way a file can be wrong has its own error.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cache/key.hpp"

namespace kiln::cache {

inline constexpr std::uint32_t kFormatVersion = 2;
inline constexpr std::size_t kHeaderSize = 72;
// A forged (resealed) header must not make a reader allocate gigabytes: the
// metadata is a small record, so anything larger is an error.
inline constexpr std::size_t kMaxMetadataSize = 64 * 1024;

enum class EntryError {
  none,
  truncated_header,   // fewer bytes than a header
  bad_magic,
  unsupported_version,
  bad_header_size,
  header_checksum,
  key_mismatch,       // the file holds another key than the one asked for
  metadata_too_large, // the header declares more than kMaxMetadataSize
  truncated_metadata, // fewer bytes than header + declared metadata
  metadata_checksum,
  size_mismatch,      // payload shorter or longer than the header says
  payload_checksum,
};

std::string_view describe(EntryError error);

// The header alone, for writers that send the metadata and the payload from
// where they lie instead of copying them behind the header. The metadata must
// be at most kMaxMetadataSize bytes (else the entry will not decode).
std::array<char, kHeaderSize> encode_header(const Key& key, std::span<const char> payload,
                                            std::string_view metadata = {});

// Header + metadata + payload, ready to be written.
std::string encode_entry(const Key& key, std::span<const char> payload, std::string_view metadata = {});

struct DecodedEntry {
  EntryError error = EntryError::none;
  std::string_view metadata;      // points into the input bytes; empty on error
  std::span<const char> payload;  // likewise
};

// Checks every header field, the metadata and the payload against their
// checksums, and the key against `expected`.
DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected);

// How many leading bytes of an entry decode_head() needs (header + metadata),
// from a header whose own fields (magic, version, sizes, checksum) check out.
// `header` may be longer than kHeaderSize.
struct HeadSize {
  EntryError error = EntryError::none;
  std::size_t bytes = 0;  // 0 on error
};
HeadSize head_size(std::span<const char> header);

struct DecodedHead {
  EntryError error = EntryError::none;
  std::string_view metadata;       // points into the input bytes; empty on error
  std::uint64_t payload_size = 0;  // as declared: the caller compares it with the file's size
};

// Checks the header, the key and the metadata of an entry from its first
// bytes; payload bytes after the metadata, if any, are ignored.
DecodedHead decode_head(std::span<const char> bytes, const Key& expected);

}  // namespace kiln::cache
