#include <gtest/gtest.h>

#include "kiln/errors.hpp"
#include "runtime/kernels/bound_spec.hpp"

namespace kiln::runtime {
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

}  // namespace
}  // namespace kiln::runtime
