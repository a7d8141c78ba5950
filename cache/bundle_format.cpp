#include "cache/bundle_format.hpp"

#include <algorithm>
#include <cstring>

#include "cache/little_endian.hpp"

namespace kiln::cache {

namespace {

constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'B', 'D', 'L', '\0'};

// Field offsets, as in the table in bundle_format.hpp.
constexpr std::size_t kVersionAt = 8;
constexpr std::size_t kCountAt = 12;
constexpr std::size_t kKeyHighAt = 0;
constexpr std::size_t kKeyLowAt = 8;
constexpr std::size_t kOffsetAt = 16;
constexpr std::size_t kSizeAt = 24;
static_assert(kSizeAt + 8 == kBundleMemberSize);

std::uint64_t align_up(std::uint64_t at) { return (at + kImageAlignment - 1) / kImageAlignment * kImageAlignment; }

bool by_key(const Key& a, const Key& b) { return a.high != b.high ? a.high < b.high : a.low < b.low; }

DecodedBundle failed(BundleError error) { return {error, {}}; }

}  // namespace

std::string_view describe(BundleError error) {
  switch (error) {
    case BundleError::none: return "no error";
    case BundleError::truncated_header: return "shorter than a bundle header";
    case BundleError::bad_magic: return "not a kiln cache bundle (bad magic)";
    case BundleError::unsupported_version: return "bundle format version not supported";
    case BundleError::bad_member_count: return "bundle member count out of range";
    case BundleError::truncated_table: return "bundle member table runs past the payload";
    case BundleError::unordered_keys: return "bundle member keys not strictly ascending";
    case BundleError::bad_image_offset: return "bundle image offset unaligned or overlapping";
    case BundleError::image_out_of_range: return "bundle image empty or past the payload";
  }
  return "unknown bundle error";
}

Key bundle_key(std::vector<Key> members) {
  std::sort(members.begin(), members.end(), by_key);
  members.erase(std::unique(members.begin(), members.end()), members.end());
  KeyBuilder builder;
  builder.add("kiln.bundle", static_cast<std::int64_t>(kBundleVersion));
  for (const Key& key : members) builder.add("member", key.hex());
  return builder.finish();
}

std::optional<std::string> encode_bundle(std::vector<BundleInput> members) {
  std::sort(members.begin(), members.end(), [](const BundleInput& a, const BundleInput& b) {
    return by_key(a.key, b.key);
  });
  if (members.size() > kMaxBundleMembers) return std::nullopt;
  for (std::size_t i = 0; i < members.size(); ++i) {
    if (members[i].image.empty() || (i > 0 && members[i].key == members[i - 1].key)) return std::nullopt;
  }
  std::string out(kBundleHeaderSize + kBundleMemberSize * members.size(), '\0');
  std::memcpy(out.data(), kMagic, sizeof kMagic);
  store_le<std::uint32_t>(out.data() + kVersionAt, kBundleVersion);
  store_le<std::uint32_t>(out.data() + kCountAt, static_cast<std::uint32_t>(members.size()));
  for (std::size_t i = 0; i < members.size(); ++i) {
    const std::uint64_t offset = align_up(out.size());
    char* row = out.data() + kBundleHeaderSize + kBundleMemberSize * i;
    store_le<std::uint64_t>(row + kKeyHighAt, members[i].key.high);
    store_le<std::uint64_t>(row + kKeyLowAt, members[i].key.low);
    store_le<std::uint64_t>(row + kOffsetAt, offset);
    store_le<std::uint64_t>(row + kSizeAt, members[i].image.size());
    out.resize(offset, '\0');
    out.append(members[i].image.data(), members[i].image.size());
  }
  return out;
}

const BundleSlot* DecodedBundle::find(const Key& key) const {
  const auto it = std::lower_bound(members.begin(), members.end(), key,
                                   [](const BundleSlot& slot, const Key& k) { return by_key(slot.key, k); });
  return it != members.end() && it->key == key ? &*it : nullptr;
}

DecodedBundle decode_bundle(std::span<const char> payload) {
  if (payload.size() < kBundleHeaderSize) return failed(BundleError::truncated_header);
  if (std::memcmp(payload.data(), kMagic, sizeof kMagic) != 0) return failed(BundleError::bad_magic);
  if (load_le<std::uint32_t>(payload.data() + kVersionAt) != kBundleVersion)
    return failed(BundleError::unsupported_version);
  const std::uint32_t count = load_le<std::uint32_t>(payload.data() + kCountAt);
  if (count > kMaxBundleMembers) return failed(BundleError::bad_member_count);
  // count is bounded, so the table's size cannot overflow.
  const std::uint64_t table_end = kBundleHeaderSize + std::uint64_t{kBundleMemberSize} * count;
  if (table_end > payload.size()) return failed(BundleError::truncated_table);
  DecodedBundle out;
  out.members.reserve(count);
  std::uint64_t free_from = table_end;  // the first byte no earlier part holds
  for (std::uint32_t i = 0; i < count; ++i) {
    const char* row = payload.data() + kBundleHeaderSize + kBundleMemberSize * i;
    BundleSlot slot{{load_le<std::uint64_t>(row + kKeyHighAt), load_le<std::uint64_t>(row + kKeyLowAt)},
                    load_le<std::uint64_t>(row + kOffsetAt), load_le<std::uint64_t>(row + kSizeAt)};
    if (i > 0 && !by_key(out.members.back().key, slot.key)) return failed(BundleError::unordered_keys);
    if (slot.offset % kImageAlignment != 0 || slot.offset < free_from) return failed(BundleError::bad_image_offset);
    // Subtractions of what is known to be smaller only: a forged size cannot wrap.
    if (slot.size == 0 || slot.offset > payload.size() || slot.size > payload.size() - slot.offset)
      return failed(BundleError::image_out_of_range);
    free_from = slot.offset + slot.size;
    out.members.push_back(slot);
  }
  return out;
}

}  // namespace kiln::cache
