// Issue 33, item 11: a kernel name registered again in one Runtime. The same
// text changes nothing; a new text replaces the old for every later request,
// and handles already resolved keep calling the binary they were given.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

std::string scale_by(double factor) {
  return "#pragma kiln kernel scale_again\n"
         "#pragma kiln array double y[n]\n"
         "#pragma kiln domain start end\n"
         "#pragma kiln size n contains start end\n"
         "kiln::for_each_column(start, end, [&](kiln::index_t c) { y(c) *= " + std::to_string(factor) + "; });\n";
}

TEST(RegisterAgain, ANewTextReplacesTheKernelForLaterRequestsAndOldHandlesKeepTheirs) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  Spec spec;
  spec.set("start", 0).set("end", 4);
  EXPECT_EQ(rt.register_kernel(scale_by(2.0), "first.kiln"), "scale_again");
  const Kernel first = rt.kernel("scale_again", spec);
  EXPECT_EQ(rt.register_kernel(scale_by(2.0), "first.kiln"), "scale_again");  // the same text: nothing changes
  EXPECT_EQ(rt.kernel("scale_again", spec).key(), first.key());

  EXPECT_EQ(rt.register_kernel(scale_by(3.0), "second.kiln"), "scale_again");
  const Kernel second = rt.kernel("scale_again", spec);  // the same spec: the new text
  EXPECT_NE(second.key(), first.key());
  std::vector<double> y(4, 1.0);
  second(c_array(y.data(), {4}));
  EXPECT_EQ(y, std::vector<double>(4, 3.0));
  first(c_array(y.data(), {4}));  // the old handle: the old binary
  EXPECT_EQ(y, std::vector<double>(4, 6.0));
  EXPECT_EQ(rt.declaration("scale_again").parameters.size(), 2u);

  // An embedded kernel's name stays taken.
  const std::string embedded = rt.kernel_names().front();
  std::string message;
  try {
    rt.register_kernel("#pragma kiln kernel " + embedded + "\n#pragma kiln array double y[1]\n", "mine.kiln");
  } catch (const KernelSourceError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("embedded in kiln"), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln::testing
