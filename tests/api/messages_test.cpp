// Issue 33, item 10: messages that said the wrong thing. An int32 is "an
// int32" (was "a int32"); strides given for an array the kernel does not
// declare name an array, not a "parameter".
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

const char* kCount = R"(#pragma kiln kernel count_cells
#pragma kiln array int32 counts[n]
#pragma kiln domain start end
#pragma kiln size n contains start end
kiln::for_each_column(start, end, [&](kiln::index_t c) { counts(c) += 1; });
)";

TEST(Messages, AnInt32TakesAnAn) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(kCount, "count.kiln");
  Spec spec;
  spec.set("start", 0).set("end", 3);
  const Kernel k = rt.kernel("count_cells", spec, Mode::generic);
  std::vector<double> wrong(3, 0.0);
  std::string message;
  try {
    k(c_array(wrong.data(), {3}));
  } catch (const ArgumentError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("'counts': expected an int32 array of rank 1, got a double array of rank 1"),
            std::string::npos)
      << message;
}

TEST(Messages, StridesOfAnUnknownArrayNameAnArray) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(kCount, "count.kiln");
  Spec spec;
  spec.set("start", 0).set("end", 3).strides("cuonts", {1});
  std::string message;
  try {
    (void)rt.kernel("count_cells", spec);
  } catch (const SpecError& e) {
    message = e.what();
  }
  EXPECT_NE(message.find("kernel 'count_cells', array 'cuonts': unknown (its strides or blocks were given); the "
                         "kernel's arrays: counts"),
            std::string::npos)
      << message;
  EXPECT_EQ(message.find("parameter"), std::string::npos) << message;
}

}  // namespace
}  // namespace kiln::testing
