// libFuzzer target over the parsers of untrusted bytes in cache/: the entry
// file (decode_entry, decode_head, head_size) and the metadata's JSON
// (decode_metadata). Built and run by run_fuzz.sh with ASan and UBSan.
//
// Random bytes almost never get past the header checksum, so each input is
// also decoded "resealed": its checksums recomputed over whatever its size
// fields point at. That lets the fuzzer reach the size and bounds logic
// behind the checksums with any declared sizes.
//
// KILN_FUZZ_WRITE_SEEDS=<folder>: write the seed corpus (valid entries) there
// and exit. Made by the current code rather than checked in, so the seeds
// follow every change of the format.
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
#include "cache/entry_metadata.hpp"
#include "cache/little_endian.hpp"

namespace {

using namespace kiln::cache;

// Offsets from the table in entry_format.hpp.
constexpr std::size_t kKeyHighAt = 16, kKeyLowAt = 24, kMetadataSizeAt = 32, kMetadataSumAt = 40;
constexpr std::size_t kPayloadSumAt = 56, kHeaderSumAt = 64;

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

// Decodes `bytes` every way there is and checks that the answers agree.
void decode_all(std::span<const char> bytes, const Key& key) {
  const DecodedEntry entry = decode_entry(bytes, key);
  const DecodedHead head = decode_head(bytes, key);
  const HeadSize size = head_size(bytes);
  if (entry.error != EntryError::none) {
    require(entry.payload.empty() && entry.metadata.empty(), "a failed decode returns no bytes");
    require(!describe(entry.error).empty(), "every error is described");
  } else {
    require(within(entry.payload, bytes) && within(entry.metadata, bytes), "decoded parts lie inside the input");
    require(kHeaderSize + entry.metadata.size() + entry.payload.size() == bytes.size(), "the parts add up");
    require(head.error == EntryError::none && head.metadata == entry.metadata, "the head agrees with the entry");
    require(head.payload_size == entry.payload.size(), "the head's payload size agrees");
    require(size.error == EntryError::none && size.bytes == kHeaderSize + entry.metadata.size(), "head_size agrees");
    decode_metadata(entry.metadata);
  }
  if (head.error == EntryError::none) {
    require(within(head.metadata, bytes), "the head's metadata lies inside the input");
    require(size.error == EntryError::none && size.bytes <= bytes.size(), "head_size fits a decodable head");
  }
}

// The input with its checksums recomputed over what its size fields claim;
// the sizes themselves stay as the fuzzer made them.
std::string resealed(std::span<const char> bytes) {
  std::string out(bytes.begin(), bytes.end());
  char* data = out.data();
  const std::uint64_t metadata_size = load_le<std::uint64_t>(data + kMetadataSizeAt);
  const std::size_t rest = out.size() - kHeaderSize;
  if (metadata_size <= rest) {
    store_le<std::uint64_t>(data + kMetadataSumAt, XXH3_64bits(data + kHeaderSize, metadata_size));
    const std::size_t payload_at = kHeaderSize + metadata_size;
    store_le<std::uint64_t>(data + kPayloadSumAt, XXH3_64bits(data + payload_at, out.size() - payload_at));
  }
  store_le<std::uint64_t>(data + kHeaderSumAt, XXH3_64bits(data, kHeaderSumAt));
  return out;
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
  std::printf("entry_fuzz: 5 seeds written to %s\n", folder.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  if (const char* folder = std::getenv("KILN_FUZZ_WRITE_SEEDS")) {
    write_seeds(folder);
    std::exit(0);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const char> bytes(reinterpret_cast<const char*>(data), size);
  // The key the input names, as the file's name would: lets mutations reach past the key check.
  const Key named = size >= kKeyLowAt + 8 ? Key{load_le<std::uint64_t>(bytes.data() + kKeyHighAt),
                                                load_le<std::uint64_t>(bytes.data() + kKeyLowAt)}
                                          : Key{};
  decode_all(bytes, named);
  decode_all(bytes, Key{named.high, ~named.low});  // never the named key
  if (size >= kHeaderSize) {
    const std::string sealed = resealed(bytes);
    decode_all(sealed, named);
  }
  // The whole input as metadata text too: the JSON decoder sees raw bytes.
  decode_metadata(std::string_view(bytes.data(), bytes.size()));
  return 0;
}
