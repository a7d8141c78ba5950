#include <gtest/gtest.h>

#include "kiln/errors.hpp"
#include "runtime/kernels/kernel_source.hpp"

namespace kiln::runtime {
namespace {

const char* kSource = R"(// a comment
#pragma kiln kernel scale
#pragma kiln array double x[2]
#pragma kiln scalar double factor
#pragma kiln domain horizontal_start, horizontal_end vertical_start
#pragma kiln static bool flag
#pragma kiln static int count
x(0, 0) *= factor;
)";

TEST(KernelSource, ParsesDeclarationsInOrder) {
  const KernelInfo info = parse_kernel_source(kSource, "scale.kiln");
  EXPECT_EQ(info.name, "scale");
  ASSERT_EQ(info.args.size(), 2u);
  EXPECT_EQ(info.args[0].name, "x");
  EXPECT_EQ(info.args[0].rank, 2);
  EXPECT_EQ(info.args[0].type, ElementType::f64);
  EXPECT_EQ(info.args[1].name, "factor");
  EXPECT_EQ(info.args[1].rank, 0);
  ASSERT_EQ(info.params.size(), 5u);
  EXPECT_EQ(info.params[0].name, "horizontal_start");
  EXPECT_EQ(info.params[2].name, "vertical_start");
  EXPECT_EQ(info.params[2].kind, ParamKind::domain);
  EXPECT_EQ(info.params[3].type, ElementType::boolean);
  EXPECT_EQ(info.params[4].type, ElementType::i64);
}

TEST(KernelSource, AcceptsBlanksAndTabsInDeclarations) {
  const KernelInfo info = parse_kernel_source(
      "  #  pragma   kiln kernel\tk  \n#pragma kiln array  int32 table [ 3 ]\n#pragma kiln domain a,b ,c\n", "k.kiln");
  EXPECT_EQ(info.name, "k");
  ASSERT_EQ(info.args.size(), 1u);
  EXPECT_EQ(info.args[0].name, "table");
  EXPECT_EQ(info.args[0].rank, 3);
  EXPECT_EQ(info.args[0].type, ElementType::i32);
  ASSERT_EQ(info.params.size(), 3u);
  EXPECT_EQ(info.params[2].name, "c");
}

TEST(KernelSource, OtherPragmasAreBody) {
  const KernelInfo info = parse_kernel_source("#pragma kiln kernel k\n#pragma kilnx y\n#pragma once\n", "k.kiln");
  EXPECT_NE(info.body.find("#pragma kilnx y"), std::string::npos);
  EXPECT_NE(info.body.find("#pragma once"), std::string::npos);
}

TEST(KernelSource, BodyKeepsLineNumbersAndDropsPragmas) {
  const KernelInfo info = parse_kernel_source(kSource, "scale.kiln");
  EXPECT_EQ(info.body.find("#pragma"), std::string::npos);
  // "x(0, 0) *= factor;" is line 8 of the file, so 7 newlines come before it.
  const auto pos = info.body.find("x(0, 0)");
  ASSERT_NE(pos, std::string::npos);
  EXPECT_EQ(std::count(info.body.begin(), info.body.begin() + static_cast<long>(pos), '\n'), 7);
}

TEST(KernelSource, TemporariesAreNotArguments) {
  const KernelInfo info = parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln array double w[2]\n#pragma kiln scalar double f\n"
      "#pragma kiln array float v[1]\n#pragma kiln temporary float  z [ 2 ] like w\n"
      "#pragma kiln temporary int32 y[1] like v\n",
      "k.kiln");
  ASSERT_EQ(info.args.size(), 3u);
  ASSERT_EQ(info.temporaries.size(), 2u);
  EXPECT_EQ(info.temporaries[0].name, "z");
  EXPECT_EQ(info.temporaries[0].type, ElementType::f32);
  EXPECT_EQ(info.temporaries[0].rank, 2);
  EXPECT_EQ(info.temporaries[0].like, 0u);
  EXPECT_EQ(info.temporaries[1].type, ElementType::i32);
  EXPECT_EQ(info.temporaries[1].like, 2u);
}

void expect_error(const std::string& source, const std::string& fragment) {
  try {
    parse_kernel_source(source, "bad.kiln");
    FAIL() << "no error for: " << source;
  } catch (const KernelSourceError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST(KernelSource, MalformedDeclarationsNameFileAndLine) {
  expect_error("#pragma kiln kernel k\n#pragma kiln array complex z[2]\n", "bad.kiln:2:");
  expect_error("#pragma kiln kernel k\n#pragma kiln array double z[7]\n", "rank 1-4");
  expect_error("#pragma kiln kernel k\n#pragma kiln static float f\n", "bad.kiln:2:");
  expect_error("#pragma kiln kernel k\n#pragma kiln domain a\n#pragma kiln static int a\n", "'a' is declared twice");
  expect_error("#pragma kiln kernel k\n#pragma kiln bogus x\n", "unknown declaration");
  expect_error("#pragma kiln kernel k\n#pragma kiln domain kiln_x\n", "reserved");
  // The kernel's own name too: the README reserves the prefix for every name.
  expect_error("#pragma kiln kernel kiln_evil\n", "bad.kiln:1: names starting with 'kiln' are reserved: 'kiln_evil'");
  expect_error("#pragma kiln array double x[1]\n#pragma kiln kernel kiln\n", "bad.kiln:2: names starting with 'kiln'");
  expect_error("#pragma kiln array double z[1]\n", "no '#pragma kiln kernel");
  expect_error("#pragma kiln kernel k\n#pragma kiln kernel j\n", "a second");
  expect_error("#pragma kiln kernel k\n#pragma kiln array double z[2] extra\n", "bad.kiln:2:");
  expect_error("#pragma kiln kernel k\n#pragma kiln array double 9z[2]\n", "not an identifier");
  expect_error("#pragma kiln kernel k\n#pragma kiln scalar double\n", "bad.kiln:2:");
  expect_error("#pragma kiln kernel k\n#pragma kiln\n", "unknown declaration");
  expect_error("#pragma kiln kernel k j\n", "expected '#pragma kiln kernel <name>'");
}

TEST(KernelSource, MalformedTemporariesNameTheCause) {
  const std::string head = "#pragma kiln kernel k\n#pragma kiln array double w[2]\n#pragma kiln scalar double s\n";
  expect_error(head + "#pragma kiln temporary double z[2]\n", "bad.kiln:4: expected '#pragma kiln temporary");
  expect_error(head + "#pragma kiln temporary double z[2] as w\n", "bad.kiln:4: expected");
  expect_error(head + "#pragma kiln temporary bool z[2] like w\n", "bad.kiln:4: expected");
  expect_error(head + "#pragma kiln temporary double z like w\n", "bad.kiln:4: expected");
  expect_error(head + "#pragma kiln temporary double z[2] like v\n",
               "bad.kiln:4: temporary 'z': 'v' is not an array declared above it");
  expect_error(head + "#pragma kiln temporary double z[2] like s\n", "'s' is not an array declared above it");
  expect_error(head + "#pragma kiln temporary double z[1] like w\n",
               "temporary 'z' has rank 1, 'w' rank 2: a temporary is laid out like an array of its rank");
  expect_error(head + "#pragma kiln temporary double w[2] like w\n", "'w' is declared twice");
  expect_error(head + "#pragma kiln temporary double kiln_z[2] like w\n", "reserved");
}

}  // namespace
}  // namespace kiln::runtime
