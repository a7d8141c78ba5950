#include <gtest/gtest.h>

#include "lang/codegen.hpp"
#include "lang/parser.hpp"

namespace kiln::lang {
namespace {

KernelInfo kernel() {
  return parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln array double x[2]\n#pragma kiln domain n\n"
      "#pragma kiln static double c\n#pragma kiln static bool flag\nx(0, 0) = c;\n",
      "k.kiln");
}

BoundSpec bound() {
  return bind_spec(kernel(), Spec().set("n", 7).set("c", 0.1).set("flag", true).strides("x", {1, 16}));
}

TEST(Codegen, SpecialisedValuesAreExactConstants) {
  const std::string tu = generate_source(kernel(), bound(), true, "// prelude", "kiln_abc");
  EXPECT_NE(tu.find("extern \"C\" int kiln_abc("), std::string::npos);
  EXPECT_NE(tu.find("constexpr kiln::index_t n = static_cast<kiln::index_t>(7LL);"), std::string::npos) << tu;
  EXPECT_NE(tu.find("constexpr double c = (0x1.999999999999ap-4);"), std::string::npos) << tu;
  EXPECT_NE(tu.find("constexpr bool flag = true;"), std::string::npos) << tu;
  EXPECT_NE(tu.find("kiln::View<double, 2, 1, 16> x((*kiln_args[0]));"), std::string::npos) << tu;
  EXPECT_NE(tu.find("::matches((*kiln_args[0]))) return 1;"), std::string::npos) << tu;
  EXPECT_NE(tu.find("#line 1 \"k.kiln\""), std::string::npos);
}

TEST(Codegen, GenericReadsValuesAtRunTime) {
  BoundSpec b = bound();
  b.strides.assign(b.strides.size(), std::nullopt);
  const std::string tu = generate_source(kernel(), b, false, "// prelude", "kiln_abc");
  EXPECT_EQ(tu.find("constexpr kiln::index_t n"), std::string::npos);
  EXPECT_NE(tu.find("const kiln::index_t n = static_cast<kiln::index_t>(kiln_params[0].i64);"), std::string::npos);
  EXPECT_NE(tu.find("const double c = static_cast<double>(kiln_params[1].f64);"), std::string::npos);
  EXPECT_NE(tu.find("kiln::View<double, 2> x((*kiln_args[0]));"), std::string::npos) << tu;
  EXPECT_EQ(tu.find("::matches"), std::string::npos);
}

TEST(Codegen, SpecialisedTextDependsOnTheValues) {
  BoundSpec other = bound();
  other.values[0].i64 = 8;
  EXPECT_NE(generate_source(kernel(), bound(), true, "", "e"), generate_source(kernel(), other, true, "", "e"));
  EXPECT_EQ(generate_source(kernel(), bound(), false, "", "e"), generate_source(kernel(), other, false, "", "e"));
}

// A blocked array: nproma and its strides (the block stride last) become
// constants of a BlockedView, and the entry checks both; a generic build
// keeps the blocked view with everything read at run time.
TEST(Codegen, BlockedArraysGetBlockedViews) {
  kiln_arg view{};
  view.rank = 3;
  view.shape[0] = 8;
  view.strides[0] = 1, view.strides[1] = 8, view.strides[2] = 64;
  BoundSpec b = bind_spec(kernel(), Spec().set("n", 7).set("c", 0.1).set("flag", true).blocked_like("x", view));
  const std::string tu = generate_source(kernel(), b, true, "", "e");
  EXPECT_NE(tu.find("kiln::BlockedView<double, 2, 8, 1, 8, kiln::dynamic, kiln::dynamic, 64> x((*kiln_args[0]));"),
            std::string::npos)
      << tu;
  EXPECT_NE(tu.find("::matches((*kiln_args[0]))) return 1;"), std::string::npos) << tu;
  view.shape[2] = 1;  // one block: its count is a constant too
  const std::string one = generate_source(
      kernel(), bind_spec(kernel(), Spec().set("n", 7).set("c", 0.1).set("flag", true).blocked_like("x", view)), true,
      "", "e");
  EXPECT_NE(one.find("kiln::BlockedView<double, 2, 8, 1, 8, kiln::dynamic, kiln::dynamic, 64, 1> x("),
            std::string::npos)
      << one;
  b.strides[0].reset();
  b.nproma[0] = kRunTimeNproma;
  const std::string generic = generate_source(kernel(), b, false, "", "e");
  EXPECT_NE(generic.find("kiln::BlockedView<double, 2, kiln::dynamic, kiln::dynamic, kiln::dynamic, kiln::dynamic, "
                         "kiln::dynamic, kiln::dynamic> x("),
            std::string::npos)
      << generic;
  EXPECT_EQ(generic.find("::matches"), std::string::npos);
}

// Specialised with a run-time value: that one is read from the parameter
// block, the others stay constants.
TEST(Codegen, RunTimeValuesOfASpecialisedBuildAreRead) {
  const BoundSpec b = bind_spec(kernel(), Spec().set("n", 7).set("c", 0.1).set("flag", true).run_time("n"));
  const std::string tu = generate_source(kernel(), b, true, "", "e");
  EXPECT_NE(tu.find("const kiln::index_t n = static_cast<kiln::index_t>(kiln_params[0].i64);"), std::string::npos)
      << tu;
  EXPECT_NE(tu.find("constexpr double c = "), std::string::npos) << tu;
}

// A temporary comes after the arguments, with its `like` array's view type
// (fixed strides, blocks) as a kiln::Temporary (helpers walk only what it
// holds) and no stride check: kiln lays it out.
TEST(Codegen, TemporariesFollowTheArgumentsLaidOutAsTheirArray) {
  const KernelInfo k = parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln array double x[2]\n#pragma kiln scalar int s\n"
      "#pragma kiln temporary float t[2] like x\n#pragma kiln domain n\n",
      "k.kiln");
  BoundSpec b = bind_spec(k, Spec().set("n", 7).strides("x", {1, 16}));
  const std::string tu = generate_source(k, b, true, "", "e");
  EXPECT_NE(tu.find("const kiln::Temporary<kiln::View<float, 2, 1, 16>> t(*kiln_args[2]);"), std::string::npos) << tu;
  EXPECT_EQ(tu.find("::matches(*kiln_args[2])"), std::string::npos) << tu;
  const std::string gpu = generate_gpu_source(k, b, true, "", "e");
  EXPECT_NE(gpu.find("struct kiln_gpu_args { kiln_arg a[3]; };"), std::string::npos) << gpu;
  EXPECT_NE(gpu.find("&kiln_a.a[2]};"), std::string::npos) << gpu;
  kiln_arg view{};
  view.rank = 3;
  view.shape[0] = 8;
  view.strides[0] = 1, view.strides[1] = 8, view.strides[2] = 64;
  b = bind_spec(k, Spec().set("n", 7).blocked_like("x", view));
  const std::string blocked = generate_source(k, b, true, "", "e");
  EXPECT_NE(blocked.find("kiln::Temporary<kiln::BlockedView<float, 2, 8, 1, 8, kiln::dynamic, kiln::dynamic, 64>> "
                         "t(*kiln_args[2]);"),
            std::string::npos)
      << blocked;
}

// A bool array is a view of C++ bool (one byte, as NumPy's bool_ and
// Fortran's logical(c_bool) store it), on the CPU and the GPU alike.
TEST(Codegen, BoolArraysAreViewsOfBool) {
  const KernelInfo k = parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln array bool m[2]\n#pragma kiln array double x[2]\n"
      "#pragma kiln temporary bool t[2] like x\n#pragma kiln domain n\n",
      "k.kiln");
  const BoundSpec b = bind_spec(k, Spec().set("n", 7).strides("m", {1, 16}));
  const std::string tu = generate_source(k, b, true, "", "e");
  EXPECT_NE(tu.find("const kiln::View<bool, 2, 1, 16> m((*kiln_args[0]));"), std::string::npos) << tu;
  EXPECT_NE(tu.find("const kiln::Temporary<kiln::View<bool, 2>> t(*kiln_args[2]);"), std::string::npos) << tu;
  const std::string gpu = generate_gpu_source(k, b, true, "", "e");
  EXPECT_NE(gpu.find("const kiln::View<bool, 2, 1, 16> m((*kiln_args[0]));"), std::string::npos) << gpu;
}

// The GPU entry takes its arguments by value and leaves the stride check to
// the launcher; the declarations and the body are the CPU entry's.
TEST(Codegen, GpuEntryTakesArgumentsByValue) {
  const std::string tu = generate_gpu_source(kernel(), bound(), true, "// prelude", "kiln_abc");
  EXPECT_NE(tu.find("struct kiln_gpu_args { kiln_arg a[1]; };"), std::string::npos) << tu;
  EXPECT_NE(tu.find("struct kiln_gpu_params { kiln_value v[3]; };"), std::string::npos) << tu;
  EXPECT_NE(tu.find("extern \"C\" __global__ void kiln_abc(const kiln_gpu_args kiln_a,"), std::string::npos) << tu;
  EXPECT_NE(tu.find("kiln_args[1] = {&kiln_a.a[0]};"), std::string::npos) << tu;
  EXPECT_NE(tu.find("kiln::View<double, 2, 1, 16> x((*kiln_args[0]));"), std::string::npos) << tu;
  EXPECT_EQ(tu.find("::matches"), std::string::npos);
  EXPECT_EQ(tu.find("return 0;"), std::string::npos);
  EXPECT_NE(tu.find("#line 1 \"k.kiln\""), std::string::npos);
  EXPECT_NE(tu.find("x(0, 0) = c;"), std::string::npos);
}

}  // namespace
}  // namespace kiln::lang
