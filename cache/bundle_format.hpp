// A cache bundle: many kernels' binaries and their keys in one payload, so a
// process that resolves a known set of kernels opens and maps one file instead
// of one per kernel (docs/manual/cache.md, Bundles).
//
// The bundle is stored as the payload of an ordinary entry (entry_format.hpp)
// under bundle_key() of its members' keys: written atomically, checksummed,
// trust-checked and evicted like any entry. This file is only the payload's
// layout, opaque bytes under keys like the rest of cache/:
//
//   offset  size    field
//   0       8       magic "KILNBDL\0"
//   8       4       bundle format version (little endian), kBundleVersion = 1
//   12      4       member count N, 0 <= N <= kMaxBundleMembers
//   16      32 * N  members, keys strictly ascending:
//     +0    16      key (high word, then low word)
//     +16   8       image offset, from the payload's start
//     +24   8       image size
//   ...             images, each at a multiple of kImageAlignment, in the
//                   members' order, after the table and inside the payload
//
// Images are page aligned because the payload starts at the entry file's
// offset 0: a reader that maps the file once finds every image at a page of
// its own, as the linker laid it out for a base at a page boundary.
//
// The decoder trusts nothing (the entry checksum proves only that the writer
// wrote these bytes): every offset is checked against the payload and every
// way it can be wrong has its own error (tests/cache/bundle_format_test.cpp).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "cache/key.hpp"

namespace kiln::cache {

inline constexpr std::uint32_t kBundleVersion = 1;
inline constexpr std::size_t kBundleHeaderSize = 16;
inline constexpr std::size_t kBundleMemberSize = 32;
// The x86-64 page; a host with larger pages still maps the bundle whole (the
// images need only the alignment their linker assumed, at most this).
inline constexpr std::uint64_t kImageAlignment = 4096;
// A forged count must not make a reader allocate much: a bundle is one
// process's kernels, thousands at most.
inline constexpr std::uint32_t kMaxBundleMembers = 65536;

// In the order the checks run.
enum class BundleError {
  none,
  truncated_header,   // fewer bytes than the header
  bad_magic,          // the entry holds no bundle
  unsupported_version,
  bad_member_count,   // above kMaxBundleMembers
  truncated_table,    // the member table runs past the payload
  unordered_keys,     // keys not strictly ascending (a repeat included)
  bad_image_offset,   // not aligned, inside the table or an earlier image
  image_out_of_range, // an image runs past the payload (or is empty)
};

std::string_view describe(BundleError error);

// One member to write: its key and its binary.
struct BundleInput {
  Key key;
  std::span<const char> image;
};

// The key a bundle of these members is stored under: XXH3-128 of a tag and
// the distinct keys in ascending order, so the same set in any order, with
// repeats, names the same bundle.
Key bundle_key(std::vector<Key> members);

// The payload of a bundle of `members` (any order: sorted here; none is a
// bundle too: it says that no kernel of its set is bundled). Nullopt when
// there are more than kMaxBundleMembers, a key twice or an empty image.
std::optional<std::string> encode_bundle(std::vector<BundleInput> members);

// Where one member's image lies in the payload.
struct BundleSlot {
  Key key;
  std::uint64_t offset = 0;
  std::uint64_t size = 0;
};

struct DecodedBundle {
  BundleError error = BundleError::none;
  std::vector<BundleSlot> members;  // keys ascending; empty on error

  // The member of `key`, or null.
  const BundleSlot* find(const Key& key) const;
};

// Checks the header, the table and every image's range against the payload.
DecodedBundle decode_bundle(std::span<const char> payload);

}  // namespace kiln::cache
