// libFuzzer target over the parsers of untrusted bytes in cache/: the entry
// file (decode_entry, and the tail path read_metadata takes: decode_trailer,
// check_key_and_sizes, check_metadata; is_older_format) and the metadata's
// JSON (decode_metadata). Built and run by run_fuzz.sh with ASan and UBSan.
//
// Random bytes almost never get past the trailer checksum, so each input is
// also decoded "resealed": its checksums recomputed over whatever its size
// fields point at. That lets the fuzzer reach the size and bounds logic
// behind the checksums with any declared sizes.
//
// KILN_FUZZ_WRITE_SEEDS=<folder>: write the seed corpus (valid entries, and
// one of the older, header-first format) there and exit. Made by the current
// code rather than checked in, so the seeds follow every change of the format.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>
#include <string_view>

#include <xxhash.h>

#include "cache/entry_format.hpp"
#include "tests/fuzz/seeds.hpp"
#include "cache/entry_metadata.hpp"
#include "cache/little_endian.hpp"

namespace {

using namespace kiln::cache;

// Offsets inside the trailer, from the table in entry_format.hpp.
constexpr std::size_t kVersionAt = 8, kKeyHighAt = 16, kKeyLowAt = 24, kMetadataSizeAt = 32, kMetadataSumAt = 40;
constexpr std::size_t kPayloadSumAt = 56, kTrailerSumAt = 64;

// A broken invariant is a bug the fuzzer must report: abort, never return.
void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "entry_fuzz: invariant broken: %s\n", what);
  std::abort();
}

bool within(std::span<const char> part, std::span<const char> whole) {
  return part.empty() || (part.data() >= whole.data() && part.data() + part.size() <= whole.data() + whole.size());
}

bool within(std::string_view part, std::span<const char> whole) { return within(std::span(part), whole); }

// What read_metadata() concludes from the file's tail: trailer, key, sizes, metadata.
EntryError tail_error(std::span<const char> bytes, const Key& key) {
  const DecodedTrailer trailer = decode_trailer(bytes);
  if (const EntryError error = check_key_and_sizes(trailer, key, bytes.size()); error != EntryError::none) {
    return error;
  }
  // Checked to lie inside `bytes`: take the metadata from where the trailer says.
  const auto metadata_at = static_cast<std::size_t>(trailer.payload_size);
  const auto metadata_size = static_cast<std::size_t>(trailer.metadata_size);
  require(metadata_at <= bytes.size() && metadata_size <= bytes.size() - metadata_at, "checked sizes fit the input");
  require(metadata_at + metadata_size + kTrailerSize == bytes.size(), "checked sizes add up");
  return check_metadata(std::string_view(bytes.data() + metadata_at, metadata_size), trailer);
}

// Decodes `bytes` every way there is and checks that the answers agree.
void decode_all(std::span<const char> bytes, const Key& key) {
  const DecodedEntry entry = decode_entry(bytes, key);
  const DecodedTrailer trailer = decode_trailer(bytes);
  const EntryError tail = tail_error(bytes, key);
  require(!describe(entry.error).empty() && !describe(tail).empty(), "every error is described");
  if (entry.error != EntryError::none) {
    require(entry.payload.empty() && entry.metadata.empty(), "a failed decode returns no bytes");
  } else {
    require(within(entry.payload, bytes) && within(entry.metadata, bytes), "decoded parts lie inside the input");
    require(entry.payload.data() == bytes.data(), "the payload is the input's first bytes");
    require(entry.metadata.data() == bytes.data() + entry.payload.size(), "the metadata follows the payload");
    require(entry.payload.size() + entry.metadata.size() + kTrailerSize == bytes.size(), "the parts add up");
    require(trailer.error == EntryError::none && trailer.key == key, "the trailer agrees with the entry");
    require(trailer.metadata_size == entry.metadata.size() && trailer.payload_size == entry.payload.size(),
            "the trailer's sizes agree");
    decode_metadata(entry.metadata);
  }
  // The tail path is the whole-file path without the payload's checksum, and
  // without the older-format probe (read_metadata() reads the first bytes for it).
  if (entry.error == EntryError::none || entry.error == EntryError::payload_checksum) {
    require(tail == EntryError::none, "the tail verifies when only the payload is wrong");
  } else if (entry.error == EntryError::unsupported_version && trailer.error == EntryError::bad_magic) {
    require(is_older_format(bytes), "only an older header makes bad magic an unsupported version");
    require(tail == EntryError::bad_magic, "the tail alone sees bad magic");
  } else {
    require(tail == entry.error, "the tail path gives the whole-file path's error");
  }
  if (trailer.error == EntryError::bad_magic && is_older_format(bytes)) {
    require(entry.error == EntryError::unsupported_version, "an older header is an unsupported version");
  }
}

// The input with its checksums recomputed over what its size fields claim
// (the metadata just before the trailer, the payload before that); the sizes
// themselves stay as the fuzzer made them.
std::string resealed(std::span<const char> bytes) {
  std::string out(bytes.begin(), bytes.end());
  const std::size_t trailer_at = out.size() - kTrailerSize;
  char* data = out.data();
  char* trailer = data + trailer_at;
  const std::uint64_t metadata_size = load_le<std::uint64_t>(trailer + kMetadataSizeAt);
  if (metadata_size <= trailer_at) {
    const std::size_t metadata_at = trailer_at - metadata_size;
    store_le<std::uint64_t>(trailer + kMetadataSumAt, XXH3_64bits(data + metadata_at, metadata_size));
    store_le<std::uint64_t>(trailer + kPayloadSumAt, XXH3_64bits(data, metadata_at));
  }
  store_le<std::uint64_t>(trailer + kTrailerSumAt, XXH3_64bits(trailer, kTrailerSumAt));
  return out;
}

// `entry` as format version 2 wrote it: the trailer as a header (version 2,
// resealed) at offset 0, then the metadata, then the payload.
std::string older_format_of(const std::string& entry, std::size_t payload_size) {
  std::string header = entry.substr(entry.size() - kTrailerSize);
  store_le<std::uint32_t>(header.data() + kVersionAt, 2);
  store_le<std::uint64_t>(header.data() + kTrailerSumAt, XXH3_64bits(header.data(), kTrailerSumAt));
  const std::string body = entry.substr(0, entry.size() - kTrailerSize);
  return header + body.substr(payload_size) + body.substr(0, payload_size);
}

void write_file(const std::filesystem::path& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  if (!out) {
    std::fprintf(stderr, "entry_fuzz: cannot write seed %s\n", path.c_str());
    std::exit(1);
  }
}

// Valid entries: with and without metadata, empty and longer payloads.
void write_seeds(const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  IndexRecord record;
  record.kernel = "update_theta_and_exner";
  record.specialisation = R"({"horizontal_start":0,"horizontal_end":20480,"rd_o_cvd":0.4})";
  record.backend = "cpu";
  record.target = "x86_64-pc-linux-gnu znver4 +avx2,+fma";
  record.compile_ms = 41.5;
  const std::string metadata = encode_metadata(record);
  const std::string object = "\x7f" "ELF object bytes \x01\x02\x03 and some more";
  const Key key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  write_file(folder / "with_metadata", encode_entry(key, object, metadata));
  write_file(folder / "without_metadata", encode_entry(key, object));
  write_file(folder / "empty_payload", encode_entry(key, {}, metadata));
  write_file(folder / "empty", encode_entry(key, {}));
  write_file(folder / "metadata_only", metadata);
  write_file(folder / "older_format", older_format_of(encode_entry(key, object, metadata), object.size()));
  std::printf("entry_fuzz: 6 seeds written to %s\n", folder.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  write_seeds_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  // The key the input's trailer names, as the file's name would: lets
  // mutations reach past the key check.
  const char* trailer = size >= kTrailerSize ? bytes.data() + (size - kTrailerSize) : nullptr;
  const Key named = trailer != nullptr ? Key{load_le<std::uint64_t>(trailer + kKeyHighAt),
                                             load_le<std::uint64_t>(trailer + kKeyLowAt)}
                                       : Key{};
  decode_all(bytes, named);
  decode_all(bytes, Key{named.high, ~named.low});  // never the named key
  if (size >= kTrailerSize) {
    const std::string sealed = resealed(bytes);
    decode_all(sealed, named);
  }
  // The whole input as metadata text too: the JSON decoder sees raw bytes.
  decode_metadata(std::string_view(bytes.data(), bytes.size()));
  return 0;
}
