#include "cache/key.hpp"

#include <bit>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>
#include <xxhash.h>

namespace kiln::cache {
namespace {

namespace fs = std::filesystem;

Key base() { return KeyBuilder().add("kernel", "saxpy").finish(); }

TEST(Key, SameFieldsGiveSameKey) {
  KeyBuilder a;
  KeyBuilder b;
  a.add("s", "x").add("i", std::int64_t{7}).add("d", 1.5).add("b", true);
  b.add("s", "x").add("i", std::int64_t{7}).add("d", 1.5).add("b", true);
  EXPECT_EQ(a.finish(), b.finish());
}

TEST(Key, EveryFieldKindChangesTheKey) {
  const Key reference = base();
  EXPECT_NE(KeyBuilder().add("kernel", "saxpy").add("x", "").finish(), reference);
  EXPECT_NE(KeyBuilder().add("kernel", "saxpy").add("x", std::int64_t{0}).finish(), reference);
  EXPECT_NE(KeyBuilder().add("kernel", "saxpy").add("x", 0.0).finish(), reference);
  EXPECT_NE(KeyBuilder().add("kernel", "saxpy").add("x", false).finish(), reference);
}

TEST(Key, EveryValueChangeChangesTheKey) {
  EXPECT_NE(KeyBuilder().add("s", "a").finish(), KeyBuilder().add("s", "b").finish());
  EXPECT_NE(KeyBuilder().add("i", std::int64_t{1}).finish(), KeyBuilder().add("i", std::int64_t{2}).finish());
  EXPECT_NE(KeyBuilder().add("i", std::int64_t{-1}).finish(),
            KeyBuilder().add("i", std::numeric_limits<std::int64_t>::max()).finish());
  EXPECT_NE(KeyBuilder().add("d", 1.0).finish(), KeyBuilder().add("d", 1.0000000000000002).finish());
  EXPECT_NE(KeyBuilder().add("b", true).finish(), KeyBuilder().add("b", false).finish());
}

TEST(Key, TypeOfValueMatters) {
  const char one_le[8] = {1, 0, 0, 0, 0, 0, 0, 0};
  const Key as_int = KeyBuilder().add("v", std::int64_t{1}).finish();
  const Key as_text = KeyBuilder().add("v", std::string_view(one_le, 8)).finish();
  const Key as_double = KeyBuilder().add("v", std::bit_cast<double>(std::uint64_t{1})).finish();
  EXPECT_NE(as_int, as_text);
  EXPECT_NE(as_int, as_double);
  EXPECT_NE(KeyBuilder().add("v", true).finish(), KeyBuilder().add("v", std::string_view("\x01", 1)).finish());
}

TEST(Key, FieldBoundariesMatter) {
  EXPECT_NE(KeyBuilder().add("ab", "c").finish(), KeyBuilder().add("a", "bc").finish());
  EXPECT_NE(KeyBuilder().add("a", "bc").add("d", "e").finish(), KeyBuilder().add("a", "b").add("cd", "e").finish());
  EXPECT_NE(KeyBuilder().add("a", "").add("", "a").finish(), KeyBuilder().add("a", "a").finish());
}

TEST(Key, NameAndValueAreNotInterchangeable) {
  EXPECT_NE(KeyBuilder().add("x", "y").finish(), KeyBuilder().add("y", "x").finish());
  EXPECT_NE(KeyBuilder().add("name1", "v").finish(), KeyBuilder().add("name2", "v").finish());
}

TEST(Key, OrderMatters) {
  EXPECT_NE(KeyBuilder().add("a", "1").add("b", "2").finish(), KeyBuilder().add("b", "2").add("a", "1").finish());
}

TEST(Key, PositiveAndNegativeZeroDiffer) {
  EXPECT_NE(KeyBuilder().add("d", 0.0).finish(), KeyBuilder().add("d", -0.0).finish());
  const double nan = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(KeyBuilder().add("d", nan).finish(), KeyBuilder().add("d", nan).finish());  // same bits, same key
}

TEST(Key, StringLiteralIsAStringNotABool) {
  EXPECT_EQ(KeyBuilder().add("n", "v").finish(), KeyBuilder().add("n", std::string_view("v")).finish());
  EXPECT_NE(KeyBuilder().add("n", "v").finish(), KeyBuilder().add("n", true).finish());
}

TEST(Key, FinishCanBeCalledAgainAndMoreAdded) {
  KeyBuilder builder;
  builder.add("a", "1");
  const Key first = builder.finish();
  EXPECT_EQ(builder.finish(), first);
  builder.add("b", "2");
  EXPECT_NE(builder.finish(), first);
  EXPECT_EQ(builder.finish(), KeyBuilder().add("a", "1").add("b", "2").finish());
}

// Pins the documented canonical encoding: a change to it changes every key.
TEST(Key, MatchesTheDocumentedEncoding) {
  std::string bytes;
  const auto u64 = [&bytes](std::uint64_t v) {
    for (int i = 0; i < 8; ++i) bytes += static_cast<char>((v >> (8 * i)) & 0xff);
  };
  bytes += 's';
  u64(4);
  bytes += "name";
  u64(3);
  bytes += "abc";
  bytes += 'i';
  u64(1);
  bytes += "n";
  u64(8);
  u64(static_cast<std::uint64_t>(std::int64_t{-2}));
  bytes += 'd';
  u64(1);
  bytes += "x";
  u64(8);
  u64(std::bit_cast<std::uint64_t>(-0.0));
  bytes += 'b';
  u64(1);
  bytes += "f";
  u64(1);
  bytes += '\x01';
  const XXH128_hash_t expected = XXH3_128bits(bytes.data(), bytes.size());
  const Key key = KeyBuilder().add("name", "abc").add("n", std::int64_t{-2}).add("x", -0.0).add("f", true).finish();
  EXPECT_EQ(key.high, expected.high64);
  EXPECT_EQ(key.low, expected.low64);
}

TEST(KeyHex, IsLowerCaseHighWordFirst) {
  const Key key{0x0123456789abcdefULL, 0xfedcba9876543210ULL};
  EXPECT_EQ(key.hex(), "0123456789abcdeffedcba9876543210");
  EXPECT_EQ(Key{}.hex(), std::string(32, '0'));
}

TEST(KeyHex, RoundTrips) {
  std::mt19937_64 rng(20240601);
  for (int i = 0; i < 1000; ++i) {
    const Key key{rng(), rng()};
    Key parsed;
    ASSERT_TRUE(Key::from_hex(key.hex(), parsed)) << key.hex();
    EXPECT_EQ(parsed, key);
  }
}

TEST(KeyHex, RejectsAnythingHexDoesNotWrite) {
  const std::string good = "0123456789abcdeffedcba9876543210";
  const Key sentinel{1, 2};
  const std::string bad_texts[] = {std::string(), good.substr(1), good + "0", "0123456789ABCDEFfedcba9876543210",
                                 "0x23456789abcdeffedcba9876543210", " 123456789abcdeffedcba9876543210",
                                 "0123456789abcdeffedcba987654321g", "0123456789abcdef-edcba9876543210",
                                 std::string("0123456789abcdef\0edcba9876543210", 32)};
  for (const std::string& bad : bad_texts) {
    Key out = sentinel;
    EXPECT_FALSE(Key::from_hex(bad, out)) << bad;
    EXPECT_EQ(out, sentinel) << "from_hex changed its output on failure: " << bad;
  }
}

}  // namespace
}  // namespace kiln::cache
