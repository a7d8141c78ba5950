#include <gtest/gtest.h>

#include "kiln/errors.hpp"
#include "lang/binder.hpp"
#include "lang/parser.hpp"

namespace kiln::lang {
namespace {

KernelInfo kernel() {
  return parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln array double x[2]\n#pragma kiln scalar double s\n"
      "#pragma kiln domain n\n#pragma kiln static bool flag\n#pragma kiln static double c\n"
      "#pragma kiln static int m\n",
      "k.kiln");
}

Spec complete() { return Spec().set("n", 4).set("flag", true).set("c", 0.5).set("m", 3); }

void expect_spec_error(const Spec& spec, const std::string& fragment) {
  try {
    bind_spec(kernel(), spec);
    FAIL() << "no error, expected: " << fragment;
  } catch (const SpecError& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("kernel 'k'"), std::string::npos) << what;
    EXPECT_NE(what.find(fragment), std::string::npos) << what;
  }
}

TEST(BindSpec, BindsValuesInDeclarationOrder) {
  const BoundSpec bound = bind_spec(kernel(), complete().strides("x", {1, 8}));
  ASSERT_EQ(bound.values.size(), 4u);
  EXPECT_EQ(bound.values[0].i64, 4);
  EXPECT_EQ(bound.values[1].i64, 1);
  EXPECT_EQ(bound.values[2].f64, 0.5);
  EXPECT_EQ(bound.values[3].i64, 3);
  ASSERT_TRUE(bound.strides[0].has_value());
  EXPECT_EQ(*bound.strides[0], (Spec::Strides{1, 8}));
  EXPECT_FALSE(bound.strides[1].has_value());
}

TEST(BindSpec, AcceptsAnExactIntegerForADouble) {
  EXPECT_EQ(bind_spec(kernel(), complete().set("c", 2)).values[2].f64, 2.0);
}

TEST(BindSpec, RejectsMissingUnknownAndIllTypedValues) {
  expect_spec_error(Spec().set("flag", true).set("c", 0.5).set("m", 3), "parameter 'n': missing");
  expect_spec_error(complete().set("nn", 1), "parameter 'nn': unknown");
  expect_spec_error(complete().set("n", 4.0), "parameter 'n': expected an integer");
  expect_spec_error(complete().set("flag", 1), "parameter 'flag': expected a bool, got an integer");
  expect_spec_error(complete().set("c", true), "parameter 'c': expected a double, got a bool");
  expect_spec_error(complete().set("m", 1.5), "parameter 'm': expected an integer, got a double");
  expect_spec_error(complete().set("c", (1LL << 60) + 1), "parameter 'c': expected a double");
  expect_spec_error(complete().strides("x", {1, 2, 3}), "expected 2 strides");
  expect_spec_error(complete().strides("s", {1}), "run-time scalar argument");
  expect_spec_error(complete().set("x", 1), "expected its strides");
}

kiln_arg blocked_view(std::int64_t nproma, std::initializer_list<std::int64_t> strides) {
  kiln_arg view{};
  view.rank = static_cast<std::int32_t>(strides.size());
  view.shape[0] = nproma;
  std::copy(strides.begin(), strides.end(), view.strides);
  return view;
}

TEST(BindSpec, BlockedArraysKeepTheirNpromaAndRankPlusOneStrides) {
  const BoundSpec bound = bind_spec(kernel(), complete().blocked_like("x", blocked_view(8, {1, 8, 64})));
  EXPECT_EQ(bound.nproma[0], 8);
  EXPECT_EQ(bound.nproma[1], kFlat);
  ASSERT_TRUE(bound.strides[0].has_value());
  EXPECT_EQ(*bound.strides[0], (Spec::Strides{1, 8, 64}));
  EXPECT_EQ(passed_rank(2, bound.nproma[0]), 3);
  EXPECT_EQ(passed_rank(2, kFlat), 2);
  EXPECT_EQ(bound.nblks[0], 0) << "a view of no blocks' extent fixes no count";
  const BoundSpec runtime_strides = bind_spec(kernel(), complete().blocked("x", 5));
  EXPECT_EQ(runtime_strides.nproma[0], 5);
  EXPECT_FALSE(runtime_strides.strides[0].has_value());
  EXPECT_EQ(runtime_strides.nblks[0], 0);
}

// blocked_like fixes the block count as well (the view's last extent);
// blocked() when asked.
TEST(BindSpec, BlockCountsAreFixedWhenGiven) {
  kiln_arg one_block = blocked_view(18, {1, 18, 18 * 5});
  one_block.shape[2] = 1;
  EXPECT_EQ(bind_spec(kernel(), complete().blocked_like("x", one_block)).nblks[0], 1);
  EXPECT_EQ(bind_spec(kernel(), complete().blocked("x", 8, 3)).nblks[0], 3);
  EXPECT_EQ(bind_spec(kernel(), complete().blocked("x", 8, 3)).nblks[1], 0);
}

TEST(BindSpec, RejectsBadBlocks) {
  expect_spec_error(complete().blocked("x", 0), "nproma must be at least 1");
  expect_spec_error(complete().blocked("x", -3), "nproma must be at least 1");
  expect_spec_error(complete().blocked("s", 8), "run-time scalar argument");
  expect_spec_error(complete().blocked("x", 8, -1), "blocked with -1 blocks");
  expect_spec_error(complete().blocked_like("x", blocked_view(8, {1, 8})), "expected 3 strides (its rank and the blocks)");
  // Strides of a blocked array given as plain strides: the message says what to use.
  expect_spec_error(complete().strides("x", {1, 8, 64}), "Spec::blocked_like");
}

}  // namespace
}  // namespace kiln::lang
