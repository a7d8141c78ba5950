#include <gtest/gtest.h>

#include "runtime/call/temporaries.hpp"

namespace kiln::runtime {
namespace {

kiln_arg view(std::initializer_list<std::int64_t> shape, std::initializer_list<std::int64_t> strides) {
  return array(static_cast<double*>(nullptr), std::span(shape.begin(), shape.size()),
               std::span(strides.begin(), strides.size()));
}

// A temporary spans every element its array may address: from the lowest to
// the highest offset, with element (0, ..., 0) at `origin`.
TEST(TemporarySpan, CoversEveryElementTheArrayAddresses) {
  EXPECT_EQ(span_of(view({10}, {1})).elements, 10);
  EXPECT_EQ(span_of(view({10}, {1})).origin, 0);
  EXPECT_EQ(span_of(view({10, 4}, {4, 1})).elements, 40);
  EXPECT_EQ(span_of(view({10, 4}, {8, 1})).elements, 76);  // a section of a wider array: its gaps too
  EXPECT_EQ(span_of(view({10}, {-2})).elements, 19);
  EXPECT_EQ(span_of(view({10}, {-2})).origin, 18);
  EXPECT_EQ(span_of(view({3, 5}, {-5, 1})).origin, 10);
  EXPECT_EQ(span_of(view({8, 65, 3}, {1, 8, 520})).elements, 8 * 65 * 3);  // blocks (nproma, nlev, nblks)
  EXPECT_EQ(span_of(view({10, 0}, {1, 10})).elements, 0);
}

TEST(TemporaryBuffer, GrowsNeverShrinksAndIsAligned) {
  TemporaryBuffer b;
  EXPECT_FALSE(b.reserve(0));
  EXPECT_TRUE(b.reserve(100));
  EXPECT_GE(b.capacity(), 100u);
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(b.data()) % 64, 0u);
  EXPECT_FALSE(b.reserve(50));
  EXPECT_FALSE(b.reserve(100));
  EXPECT_TRUE(b.reserve(1000));
  EXPECT_GE(b.capacity(), 1000u);
}

}  // namespace
}  // namespace kiln::runtime
