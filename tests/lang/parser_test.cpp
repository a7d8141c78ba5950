#include <gtest/gtest.h>

#include "kiln/errors.hpp"
#include "lang/parser.hpp"

namespace kiln::lang {
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

// bool arrays and temporaries: one byte per element, C++'s bool (a mask).
TEST(KernelSource, BoolArraysAndTemporariesAreDeclared) {
  const KernelInfo info = parse_kernel_source(
      "#pragma kiln kernel k\n#pragma kiln size cells\n#pragma kiln array bool mask[cells]\n"
      "#pragma kiln array double w[cells]\n#pragma kiln temporary bool seen[1] like w\n",
      "k.kiln");
  ASSERT_EQ(info.args.size(), 2u);
  EXPECT_EQ(info.args[0].name, "mask");
  EXPECT_EQ(info.args[0].type, ElementType::boolean);
  EXPECT_EQ(info.args[0].rank, 1);
  ASSERT_EQ(info.temporaries.size(), 1u);
  EXPECT_EQ(info.temporaries[0].type, ElementType::boolean);
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
  expect_error("#pragma kiln kernel k\n#pragma kiln array double z[7]\n", "a rank (1-4)");
  expect_error("#pragma kiln kernel k\n#pragma kiln static float f\n", "bad.kiln:2:");
  expect_error("#pragma kiln kernel k\n#pragma kiln domain a\n#pragma kiln static int a\n", "'a' is declared twice");
  expect_error("#pragma kiln kernel k\n#pragma kiln bogus x\n", "unknown declaration");
  expect_error("#pragma kiln kernel k\n#pragma kiln domain kiln_x\n", "reserved");
  // The kernel's own name too: docs/manual/kernel-language.md reserves the prefix for every name.
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
}  // namespace kiln::lang

namespace kiln::lang {
namespace {

TEST(KernelSource, ExtentsSizesAndTablesAreParsed) {
  const KernelInfo info = parse_kernel_source(R"(#pragma kiln kernel k
#pragma kiln array double w[cells][levels + 1]
#pragma kiln array int32 c2e[cells][3] indexes edges
#pragma kiln array int32 c2e2co[cells][4] indexes cells or -1
#pragma kiln array double box[nz][nz - 2]
#pragma kiln domain horizontal_start horizontal_end nz
#pragma kiln size cells contains horizontal_start horizontal_end
#pragma kiln size levels
#pragma kiln size edges
#pragma kiln array double vn[edges]
)",
                                              "k.kiln");
  ASSERT_TRUE(info.checked());
  ASSERT_EQ(info.sizes.size(), 3u);
  EXPECT_EQ(info.sizes[0].start, 0u);
  EXPECT_EQ(info.sizes[0].end, 1u);
  EXPECT_FALSE(info.sizes[1].start);
  const ArgDecl& w = info.args[0];
  ASSERT_EQ(w.rank, 2);
  EXPECT_EQ(w.extents[0].of, Extent::Of::size);
  EXPECT_EQ(w.extents[1].index, 1u);
  EXPECT_EQ(w.extents[1].offset, 1);
  EXPECT_EQ(info.args[1].extents[1].of, Extent::Of::constant);
  EXPECT_EQ(info.args[1].extents[1].offset, 3);
  EXPECT_EQ(info.args[1].indexes, 2u);
  EXPECT_FALSE(info.args[1].missing_allowed);
  EXPECT_EQ(info.args[2].indexes, 0u);
  EXPECT_TRUE(info.args[2].missing_allowed);
  EXPECT_EQ(info.args[3].extents[0].of, Extent::Of::param);
  EXPECT_EQ(info.args[3].extents[1].offset, -2);
  // The old form: ranks, no extents, unchecked.
  const KernelInfo old = parse_kernel_source("#pragma kiln kernel o\n#pragma kiln array double x[2]\n", "o.kiln");
  EXPECT_FALSE(old.checked());
  EXPECT_EQ(old.args[0].rank, 2);
}

TEST(KernelSource, MalformedExtentsNameFileLineAndCause) {
  const std::string k = "#pragma kiln kernel k\n";
  const auto expect = [&](const std::string& rest, const std::string& fragment) {
    try {
      parse_kernel_source(k + rest, "bad.kiln");
      ADD_FAILURE() << "no error for: " << rest;
    } catch (const KernelSourceError& e) {
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
    }
  };
  expect("#pragma kiln size n\n#pragma kiln array double x[m]\n",
         "bad.kiln:3: 'x[m]': 'm' is neither a size ('#pragma kiln size') nor an integer parameter");
  expect("#pragma kiln size n\n#pragma kiln array double x[n + two]\n", "expected <size> + <integer>");
  expect("#pragma kiln size n\n#pragma kiln size m\n#pragma kiln array double x[n]\n",
         "bad.kiln:3: size 'm' is the extent of no array");
  expect("#pragma kiln size n\n#pragma kiln array double t[n][3] indexes n\n", "a table holds int32 or int64");
  expect("#pragma kiln size n\n#pragma kiln array bool t[n][3] indexes n\n", "a table holds int32 or int64");
  expect("#pragma kiln size n\n#pragma kiln array int32 t[n][3] indexes m\n", "'t' indexes 'm', which is not a size");
  expect("#pragma kiln size n contains a b\n#pragma kiln array double x[n]\n#pragma kiln static double a\n"
         "#pragma kiln static double b\n",
         "both must be integer parameters");
  expect("#pragma kiln array int32 t[2] indexes n\n", "declare its extents");
  expect("#pragma kiln size n\n#pragma kiln array double x[n]\n#pragma kiln temporary double t[2] like x\n",
         "bad.kiln:4: temporary 't' has rank 2, 'x' rank 1");
}

}  // namespace
}  // namespace kiln::lang
