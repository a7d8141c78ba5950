// kiln::Spec's canonical bytes: the in-memory lookup key. Equal values give
// equal bytes whatever the order they were set in; any difference differs.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>

#include "kiln/spec.hpp"

namespace kiln {
namespace {

Spec in_order() {
  Spec s;
  s.set("a", 1).set("b", 2.5).set("c", true).strides("x", {8, 1});
  return s;
}

TEST(SpecCanonical, OrderOfSettingDoesNotMatter) {
  Spec reversed;
  reversed.strides("x", {8, 1}).set("c", true).set("b", 2.5).set("a", 1);
  EXPECT_EQ(reversed.canonical(), in_order().canonical());
  EXPECT_EQ(reversed.hash(), in_order().hash());
}

TEST(SpecCanonical, ReplacingAValueIsAsIfSetOnce) {
  Spec replaced;
  replaced.set("a", 7).strides("x", {1}).set("c", false).set("b", 2.5).set("a", 1).strides("x", {8, 1}).set("c", true);
  EXPECT_EQ(replaced.entries().size(), 4u);
  EXPECT_EQ(replaced.canonical(), in_order().canonical());
}

TEST(SpecCanonical, EncodingIsNameLengthNameTypeAndValue) {
  Spec s;
  s.set("n", 3);
  std::string expected;
  const std::uint32_t length = 1;
  expected.append(reinterpret_cast<const char*>(&length), sizeof length);
  expected += "n";
  expected += static_cast<char>(1);  // std::int64_t's index in Spec::Value
  const std::int64_t value = 3;
  expected.append(reinterpret_cast<const char*>(&value), sizeof value);
  EXPECT_EQ(s.canonical(), expected);
}

TEST(SpecCanonical, EveryDifferenceDiffers) {
  const std::string base = in_order().canonical();
  Spec other_value = in_order();
  other_value.set("a", 2);
  Spec other_type = in_order();
  other_type.set("a", 1.0);
  Spec other_strides = in_order();
  other_strides.strides("x", {1, 8});
  Spec extra = in_order();
  extra.set("d", 0);
  for (const Spec* s : {&other_value, &other_type, &other_strides, &extra}) EXPECT_NE(s->canonical(), base);
  // Blocks: nproma, and the block count when fixed, are each part of the identity.
  const std::string blocks = Spec().blocked("x", 8).canonical();
  EXPECT_NE(Spec().blocked("x", 16).canonical(), blocks);
  EXPECT_NE(Spec().blocked("x", 8, 1).canonical(), blocks);
  EXPECT_NE(Spec().blocked("x", 8, 1).canonical(), Spec().blocked("x", 8, 2).canonical());
  EXPECT_EQ(Spec().blocked("x", 8, 0).canonical(), blocks);
}

// A run-time value: its mark is in the canonical bytes (the memory lookup),
// its value is not in the compiled ones (the cache key); set() keeps it.
TEST(SpecCanonical, RunTimeValuesAreMarkedAndLeftOutOfWhatIsCompiled) {
  Spec a = in_order(), b = in_order();
  a.set("a", 1).run_time("a");
  b.set("a", 2).run_time("a");
  EXPECT_NE(a.canonical(), in_order().canonical());
  EXPECT_NE(a.canonical(), b.canonical());
  EXPECT_EQ(a.compiled_canonical(), b.compiled_canonical());
  EXPECT_NE(a.compiled_canonical(), in_order().compiled_canonical());
  EXPECT_EQ(in_order().compiled_canonical(), in_order().canonical());
  b.set("a", 1);
  EXPECT_EQ(b.canonical(), a.canonical()) << "set() keeps the mark";
  EXPECT_NE(a.to_json().find("\"kiln_run_time\":[\"a\"]"), std::string::npos) << a.to_json();
}

}  // namespace
}  // namespace kiln
