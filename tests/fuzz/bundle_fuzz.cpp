// libFuzzer target over the cache bundle's table (cache/bundle_format.hpp):
// decode_bundle() on any bytes never reads outside them, and what it accepts
// is a table a reader may trust: at most kMaxBundleMembers members, keys strictly
// ascending, images aligned, non-empty, after the table, in order, without
// overlap, inside the payload; and its members, given to encode_bundle (the
// one writer), make a bundle that decodes. Built and run by run_fuzz.sh with
// ASan and UBSan.
//
// KILN_FUZZ_WRITE_SEEDS=<folder>: write bundles made by encode_bundle there
// and exit, so the seeds follow the format.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "cache/bundle_format.hpp"
#include "tests/fuzz/seeds.hpp"

namespace {

using namespace kiln::cache;

void require(bool holds, const char* what) {
  if (holds) return;
  std::fprintf(stderr, "bundle_fuzz: invariant broken: %s\n", what);
  std::abort();
}

bool before(const Key& a, const Key& b) { return a.high != b.high ? a.high < b.high : a.low < b.low; }

void check_accepted(std::span<const char> payload, const DecodedBundle& bundle) {
  require(bundle.members.size() <= kMaxBundleMembers, "member count in range");
  std::uint64_t free_from = kBundleHeaderSize + kBundleMemberSize * bundle.members.size();
  std::vector<BundleInput> inputs;
  for (std::size_t i = 0; i < bundle.members.size(); ++i) {
    const BundleSlot& slot = bundle.members[i];
    require(i == 0 || before(bundle.members[i - 1].key, slot.key), "keys strictly ascending");
    require(slot.offset % kImageAlignment == 0 && slot.offset >= free_from, "image aligned and after what precedes");
    require(slot.size > 0 && slot.offset <= payload.size() && slot.size <= payload.size() - slot.offset,
            "image inside the payload");
    require(bundle.find(slot.key) == &slot, "find() gives each member");
    free_from = slot.offset + slot.size;
    inputs.push_back({slot.key, payload.subspan(slot.offset, slot.size)});
  }
  const std::optional<std::string> again = encode_bundle(inputs);
  require(again.has_value(), "an accepted table encodes");
  const DecodedBundle redecoded = decode_bundle(*again);
  require(redecoded.error == BundleError::none && redecoded.members.size() == bundle.members.size(),
          "what encode_bundle writes decodes");
}

void write_seeds(const std::filesystem::path& folder) {
  std::filesystem::create_directories(folder);
  const std::string small = "\x7f" "ELF", large(5000, 'x');
  const std::vector<std::vector<BundleInput>> sets = {
      {},
      {{{1, 2}, small}, {{1, 3}, small}},
      {{{9, 0}, large}, {{0, 7}, small}, {{4, 4}, large}},
  };
  int n = 0;
  for (const auto& set : sets) {
    const std::string bytes = *encode_bundle(set);
    std::ofstream(folder / ("seed" + std::to_string(n++)), std::ios::binary) << bytes;
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  write_seeds_if_asked(write_seeds);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const char> payload(reinterpret_cast<const char*>(data), size);
  const DecodedBundle bundle = decode_bundle(payload);
  if (bundle.error == BundleError::none) check_accepted(payload, bundle);
  else require(bundle.members.empty(), "a refused bundle has no members");
  return 0;
}
