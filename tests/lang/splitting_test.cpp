// Which bodies may split among a call's threads (lang/splitting.hpp): those
// that call a phase helper and write no array element outside the helpers'
// calls. The parser records the answer in KernelInfo::splits.
#include "lang/splitting.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "lang/parser.hpp"

namespace kiln::lang {
namespace {

bool splits(std::string_view body) { return !why_not_split(body); }

TEST(Splitting, PhasesAloneSplit) {
  EXPECT_TRUE(splits("kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) = x(c); });"));
  EXPECT_TRUE(splits("kiln::for_each_point(w, cells, levels, [&](auto c, kiln::index_t k) { w(c, k) += 1; });\n"
                     "kiln::for_each_level_up(w, 0, n, 1, m, [&](auto c, kiln::index_t k) { w(c, k) = w(c, k - 1); });"));
  // Locals anywhere: scalars, structured bindings, a loop counting into a local.
  EXPECT_TRUE(splits("const auto [a, b] = kiln::split(r, 3);\ndouble s = 0;\n"
                     "for (int i = 0; i < 3; ++i) s += c(i);\n"
                     "kiln::for_each_column(0, n, [&](kiln::index_t c) { y(c) = s; });"));
  // Comments, strings and preprocessor lines are not code.
  EXPECT_TRUE(splits("kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; }); // y(0) = 3;\n"
                     "/* y(1) = 2; */ const char* s = \"y(0) = 1\";\n#pragma clang loop unroll(disable)\n"));
}

TEST(Splitting, NamedLambdasCountWhereTheyAreUsed) {
  EXPECT_TRUE(splits("auto f = [&](auto c) { y(c) = 1; };\nkiln::for_each_column(0, n, f);"));
  // Used by another lambda that only a phase uses.
  EXPECT_TRUE(splits("auto g = [&](auto c) { y[c] += 1; };\nauto f = [&](auto c) { g(c); };\n"
                     "kiln::for_each_column(0, n, f);"));
  const auto called = why_not_split("auto f = [&](auto c) { y(c) = 1; };\nkiln::for_each_column(0, n, f);\nf(0);");
  ASSERT_TRUE(called);
  EXPECT_EQ(called->line, 3);
  EXPECT_EQ(called->why, "calls 'f', which writes an array element (line 1), outside the kiln::for_each_* helpers");
  EXPECT_FALSE(splits("auto g = [&](auto c) { y[c] += 1; };\nauto f = [&](auto c) { g(c); };\n"
                      "kiln::for_each_column(0, n, f);\nf(1);"));
  // A lambda that writes nothing may be called anywhere.
  EXPECT_TRUE(splits("auto f = [&](auto c) { return x(c); };\ndouble s = f(0);\n"
                     "kiln::for_each_column(0, n, [&](auto c) { y(c) = f(c) + s; });"));
}

TEST(Splitting, AnElementWrittenOutsideThePhasesRefuses) {
  for (const char* body : {
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\ny(0) = 2;",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\nfor (int i = 0; i < n; ++i) s(0) += y(i);",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\np[3] = 1;",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\n*p = 3;",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\np->x = 3;",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\n++y(3);",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\ny(3)--;",
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\n[&] { y(0) = 1; }();",
           // for_each_level is no phase: a sequential loop on every thread.
           "kiln::for_each_column(0, n, [&](auto c) { y(c) = 1; });\nkiln::for_each_level(0, n, [&](auto k) { z(k) = 1; });",
       }) {
    const auto refusal = why_not_split(body);
    ASSERT_TRUE(refusal) << body;
    EXPECT_EQ(refusal->line, 2) << body;
    EXPECT_NE(refusal->why.find("outside the kiln::for_each_* helpers"), std::string::npos) << refusal->why;
  }
}

TEST(Splitting, ABodyWithoutPhasesRefuses) {
  const auto plain = why_not_split("for (kiln::index_t i = start; i < end; ++i) { const double t = x(i); }");
  ASSERT_TRUE(plain);
  EXPECT_EQ(plain->line, 0);
  EXPECT_EQ(plain->why, "calls none of the kiln::for_each_* helpers that share a call's points");
  // A plain loop that writes is named by its line.
  const auto loop = why_not_split("\n\nfor (kiln::index_t i = start; i < end; ++i) total(0) += x(i);");
  ASSERT_TRUE(loop);
  EXPECT_EQ(loop->line, 3);
}

TEST(Splitting, TheParserRecordsItWithTheLine) {
  const KernelInfo plain = parse_kernel_source(
      "#pragma kiln kernel plain\n#pragma kiln array double x[n]\n#pragma kiln array double total[1]\n"
      "#pragma kiln domain start end\n#pragma kiln size n contains start end\n"
      "for (kiln::index_t i = start; i < end; ++i) total(0) += x(i);\n",
      "plain.kiln");
  EXPECT_FALSE(plain.splits);
  EXPECT_EQ(plain.single_thread_why,
            "line 6 writes an array element outside the kiln::for_each_* helpers, where every thread of a call runs it");
  const KernelInfo phases = parse_kernel_source(
      "#pragma kiln kernel phases\n#pragma kiln array double y[2]\n#pragma kiln domain a b c d\n"
      "kiln::for_each_point(y, a, b, c, d, [&](kiln::index_t i, kiln::index_t k) { y(i, k) = 1.0; });\n",
      "phases.kiln");
  EXPECT_TRUE(phases.splits);
  EXPECT_EQ(phases.single_thread_why, "");
}

// Every kernel kiln ships splits: the granule's calls keep their threads.
TEST(Splitting, EveryShippedKernelSplits) {
  int kernels = 0;
  for (const auto& entry : std::filesystem::directory_iterator(KILN_KERNELS_SRC)) {
    if (entry.path().extension() != ".kiln") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const KernelInfo info = parse_kernel_source(text, entry.path().filename().string());
    EXPECT_TRUE(info.splits) << info.name << ": " << info.single_thread_why;
    ++kernels;
  }
  EXPECT_GE(kernels, 8);
}

}  // namespace
}  // namespace kiln::lang
