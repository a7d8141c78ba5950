#include "cache/bundle_format.hpp"

#include <cstdint>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cache/little_endian.hpp"

namespace kiln::cache {
namespace {

const Key kA{1, 2}, kB{1, 3}, kC{7, 0};
const std::string kImageA = "\x7f" "ELF image of A";
const std::string kImageB(5000, 'b');  // longer than a page: B's successor starts two pages on
const std::string kImageC = "c";

std::span<const char> span_of(const std::string& s) { return {s.data(), s.size()}; }
std::string bytes_at(const std::string& payload, const BundleSlot& slot) { return payload.substr(slot.offset, slot.size); }

std::string three() {
  // Out of order on purpose: the encoder sorts.
  return *encode_bundle({{kC, span_of(kImageC)}, {kA, span_of(kImageA)}, {kB, span_of(kImageB)}});
}

// The table row of member i, for forging.
std::size_t row(std::size_t i) { return kBundleHeaderSize + kBundleMemberSize * i; }

TEST(BundleFormat, RoundTripFindsEveryImageAtAnAlignedOffset) {
  const std::string payload = three();
  const DecodedBundle decoded = decode_bundle(span_of(payload));
  ASSERT_EQ(decoded.error, BundleError::none);
  ASSERT_EQ(decoded.members.size(), 3u);
  EXPECT_EQ(decoded.members[0].key, kA);
  EXPECT_EQ(decoded.members[1].key, kB);
  EXPECT_EQ(decoded.members[2].key, kC);
  for (const BundleSlot& slot : decoded.members) EXPECT_EQ(slot.offset % kImageAlignment, 0u);
  EXPECT_EQ(bytes_at(payload, *decoded.find(kA)), kImageA);
  EXPECT_EQ(bytes_at(payload, *decoded.find(kB)), kImageB);
  EXPECT_EQ(bytes_at(payload, *decoded.find(kC)), kImageC);
  EXPECT_EQ(decoded.find(Key{9, 9}), nullptr);
  EXPECT_EQ(decoded.members[2].offset, 4 * kImageAlignment);  // the table, A, then B over two pages
}

TEST(BundleFormat, TheSameSetInAnyOrderIsTheSameBundle) {
  EXPECT_EQ(bundle_key({kA, kB, kC}), bundle_key({kC, kA, kB, kA}));
  EXPECT_NE(bundle_key({kA, kB}), bundle_key({kA, kB, kC}));
  EXPECT_NE(bundle_key({kA, kB}), kA);
  EXPECT_EQ(three(), *encode_bundle({{kB, span_of(kImageB)}, {kA, span_of(kImageA)}, {kC, span_of(kImageC)}}));
}

// A bundle of one member, or of none (its set's kernels all load one by one).
TEST(BundleFormat, OneMemberOrNoneIsABundleToo) {
  const std::string one = *encode_bundle({{kA, span_of(kImageA)}});
  const DecodedBundle decoded = decode_bundle(span_of(one));
  ASSERT_EQ(decoded.error, BundleError::none);
  ASSERT_EQ(decoded.members.size(), 1u);
  EXPECT_EQ(bytes_at(one, decoded.members[0]), kImageA);
  const std::string none = *encode_bundle({});
  EXPECT_EQ(none.size(), kBundleHeaderSize);
  EXPECT_EQ(decode_bundle(span_of(none)).error, BundleError::none);
  EXPECT_TRUE(decode_bundle(span_of(none)).members.empty());
}

TEST(BundleFormat, EncoderRefusesWhatNoReaderWouldTake) {
  EXPECT_FALSE(encode_bundle({{kA, span_of(kImageA)}, {kA, span_of(kImageB)}}));      // a key twice
  EXPECT_FALSE(encode_bundle({{kA, span_of(kImageA)}, {kB, std::span<const char>{}}}));  // an empty image
}

TEST(BundleFormat, EveryForgedFieldHasItsOwnError) {
  const std::string good = three();
  const auto error_of = [](const std::string& bytes) { return decode_bundle(span_of(bytes)).error; };
  EXPECT_EQ(error_of(good.substr(0, 15)), BundleError::truncated_header);
  std::string forged = good;
  forged[3] = 'X';
  EXPECT_EQ(error_of(forged), BundleError::bad_magic);
  forged = good;
  store_le<std::uint32_t>(forged.data() + 8, 2);
  EXPECT_EQ(error_of(forged), BundleError::unsupported_version);
  for (const std::uint32_t count : {kMaxBundleMembers + 1, UINT32_MAX}) {
    forged = good;
    store_le<std::uint32_t>(forged.data() + 12, count);
    EXPECT_EQ(error_of(forged), BundleError::bad_member_count) << count;
  }
  EXPECT_EQ(error_of(good.substr(0, row(2) + 8)), BundleError::truncated_table);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(1), kC.high);  // B's key above C's
  EXPECT_EQ(error_of(forged), BundleError::unordered_keys);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(1) + 8, kA.low);  // B's key is now A's: a repeat
  EXPECT_EQ(error_of(forged), BundleError::unordered_keys);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(1) + 16, kImageAlignment + 8);  // unaligned
  EXPECT_EQ(error_of(forged), BundleError::bad_image_offset);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(0) + 16, 0);  // over the table
  EXPECT_EQ(error_of(forged), BundleError::bad_image_offset);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(2) + 16, kImageAlignment * 2);  // inside B's image
  EXPECT_EQ(error_of(forged), BundleError::bad_image_offset);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(2) + 24, UINT64_MAX);  // a size that would wrap
  EXPECT_EQ(error_of(forged), BundleError::image_out_of_range);
  forged = good;
  store_le<std::uint64_t>(forged.data() + row(2) + 24, 0);
  EXPECT_EQ(error_of(forged), BundleError::image_out_of_range);
  EXPECT_EQ(error_of(good.substr(0, good.size() - 1)), BundleError::image_out_of_range);  // truncated
}

// Whatever bytes a bundle holds, the decoder answers without reading outside
// them (run under ASan in build-asan): every prefix and every single flipped byte.
TEST(BundleFormat, AnyPrefixOrFlippedByteDecodesWithoutReadingOutside) {
  const std::string good = three();
  for (std::size_t n = 0; n < good.size(); n += 7) {
    const std::string prefix = good.substr(0, n);
    const DecodedBundle d = decode_bundle(span_of(prefix));
    EXPECT_NE(d.error, BundleError::none) << n;
  }
  for (std::size_t at = 0; at < row(3); ++at) {
    std::string flipped = good;
    flipped[at] = static_cast<char>(flipped[at] ^ 0x5a);
    const DecodedBundle d = decode_bundle(span_of(flipped));
    for (const BundleSlot& slot : d.members) EXPECT_LE(slot.offset + slot.size, flipped.size()) << at;
  }
}

}  // namespace
}  // namespace kiln::cache
