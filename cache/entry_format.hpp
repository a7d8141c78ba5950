// The on-disk entry format (version 3): the payload, the metadata, then a
// fixed trailer.
//
//   offset  size  field
//   0       P     payload (opaque; first, so a loader that maps files, e.g.
//                 dlopen, can map the entry file itself)
//   P       M     metadata (opaque to this layer), at most kMaxMetadataSize
//   P+M     72    trailer (kTrailerSize):
//     +0    8     magic "KILNENT\0"
//     +8    4     format version (little endian), kFormatVersion = 3
//     +12   4     trailer size in bytes (kTrailerSize)
//     +16   16    key (high word, then low word, little endian)
//     +32   8     metadata size M
//     +40   8     XXH3-64 of the metadata
//     +48   8     payload size P
//     +56   8     XXH3-64 of the payload
//     +64   8     XXH3-64 of bytes [0, 64) of the trailer
//
// The file's size is exactly P + M + 72. The payload comes first because a CPU
// kernel's payload is an ELF shared object that the runtime may dlopen() from
// the entry file itself, after verifying it: the loader needs the ELF image at
// offset 0 and ignores the bytes after it. kiln's own bookkeeping therefore
// sits at the end, and the trailer's position is known from the file's size
// alone, so a reader checks an entry's trailer and metadata from its last
// bytes (decode_trailer, check_key_and_sizes, check_metadata) without reading
// the payload: the index rebuild reads thousands of entries that way.
//
// Version 2 had the same fields as a header at offset 0, then the metadata,
// then the payload. Such a file is not an entry of this version: its last 72
// bytes are no trailer (bad magic), and is_older_format() lets a reader report
// it as unsupported_version instead.
//
// The decoders trust nothing: they parse untrusted bytes (tests/fuzz/entry_fuzz.cpp),
// never read outside them, and every way a file can be wrong has its own error.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "cache/key.hpp"

namespace kiln::cache {

inline constexpr std::uint32_t kFormatVersion = 3;
inline constexpr std::size_t kTrailerSize = 72;
// A forged (resealed) trailer must not make a reader allocate gigabytes: the
// metadata is a small record, so anything larger is an error.
inline constexpr std::size_t kMaxMetadataSize = 64 * 1024;

// In the order the checks run.
enum class EntryError {
  none,
  truncated_trailer,    // fewer bytes than a trailer
  bad_magic,            // no trailer at the end of the file
  unsupported_version,  // another format version: a later kiln's trailer, or an older format (is_older_format)
  bad_trailer_size,
  trailer_checksum,
  metadata_too_large,  // the trailer declares more than kMaxMetadataSize
  key_mismatch,        // the file holds another key than the one asked for
  size_mismatch,       // the file's size is not payload + metadata + trailer as declared
  metadata_checksum,
  payload_checksum,
};

std::string_view describe(EntryError error);

// The trailer alone, for writers that send the payload and the metadata from
// where they lie instead of copying them in front of it. The metadata must be
// at most kMaxMetadataSize bytes (else the entry will not decode).
std::array<char, kTrailerSize> encode_trailer(const Key& key, std::span<const char> payload,
                                              std::string_view metadata = {});

// Payload + metadata + trailer, ready to be written.
std::string encode_entry(const Key& key, std::span<const char> payload, std::string_view metadata = {});

struct DecodedEntry {
  EntryError error = EntryError::none;
  std::string_view metadata;      // points into the input bytes; empty on error
  std::span<const char> payload;  // likewise; on success it starts at the input's first byte
};

// A whole entry file: checks every trailer field, the key against `expected`,
// the sizes against the input's size, and the metadata and the payload
// against their checksums.
DecodedEntry decode_entry(std::span<const char> bytes, const Key& expected);

// The trailer's fields, once magic, version, trailer size, trailer checksum
// and the metadata size limit check out (error none; else only error is set).
struct DecodedTrailer {
  EntryError error = EntryError::none;
  Key key;
  std::uint64_t metadata_size = 0;  // at most kMaxMetadataSize
  std::uint64_t metadata_sum = 0;
  std::uint64_t payload_size = 0;   // as declared: check_key_and_sizes() compares it with the file's size
  std::uint64_t payload_sum = 0;
};

// The trailer in the last kTrailerSize bytes of `bytes`: the trailer alone, or
// any tail of an entry file (the whole file too). Fewer bytes: truncated_trailer.
DecodedTrailer decode_trailer(std::span<const char> bytes);

// A decoded trailer against the key asked for and the entry file's size:
// key_mismatch, or size_mismatch unless file_size == P + M + kTrailerSize
// (compared without any sum that a forged size could wrap), or none.
EntryError check_key_and_sizes(const DecodedTrailer& trailer, const Key& expected, std::uint64_t file_size);

// The M metadata bytes that precede the trailer, against its checksum:
// metadata_checksum, or size_mismatch when `metadata` is not M bytes long.
EntryError check_metadata(std::string_view metadata, const DecodedTrailer& trailer);

// How many leading bytes of a file is_older_format() looks at.
inline constexpr std::size_t kOlderFormatProbeSize = 12;

// True when `first_bytes` (a file's first bytes) start with the magic and a
// format version below kFormatVersion: an entry written by an older kiln,
// with its header first. Only asked once the trailer's magic is bad, so a
// payload starting with those bytes cannot make a good entry fail.
bool is_older_format(std::span<const char> first_bytes);

}  // namespace kiln::cache
