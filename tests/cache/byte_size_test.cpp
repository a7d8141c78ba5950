// Sizes as people write them, by one strict rule for KILN_CACHE_MAX_SIZE,
// KILN_COMPILE_MEMORY and `kiln cache gc --max-size` alike.
#include <gtest/gtest.h>

#include "cache/byte_size.hpp"

namespace kiln::cache {
namespace {

TEST(ByteSize, TakesDecimalNumbersWithPowerOf1024Units) {
  EXPECT_EQ(parse_byte_size("1048576"), 1048576u);
  EXPECT_EQ(parse_byte_size("500M"), 500u << 20);
  EXPECT_EQ(parse_byte_size("1.5G"), 3u << 29);
  EXPECT_EQ(parse_byte_size("2GiB"), 2u << 30);
  EXPECT_EQ(parse_byte_size("4kb"), 4096u);
  EXPECT_EQ(parse_byte_size("0"), 0u);
}

TEST(ByteSize, RefusesEverythingElse) {
  for (const char* bad : {"1e3", "1E3G", "+5", "-5", "0x10", " 5", "5 ", "inf", "nan", ".5", "5.", "", "G", "5X",
                          "5GG", "5 G", "1.2.3", "99999999999T"})
    EXPECT_FALSE(parse_byte_size(bad).has_value()) << "'" << bad << "'";
}

}  // namespace
}  // namespace kiln::cache
