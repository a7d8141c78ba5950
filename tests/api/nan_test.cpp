// NaN semantics of the prelude's min and max (NumPy's minimum and maximum:
// NaN propagates, as icon4py's references have it) and fmin and fmax (C's:
// NaN dropped), in a specialised and a generic build alike.
#include <cmath>
#include <limits>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

const char* kMinMax = R"(#pragma kiln kernel min_max
#pragma kiln array double a[1]
#pragma kiln array double b[1]
#pragma kiln array double out[2]
#pragma kiln domain n
kiln::for_each_column(0, n, [&](kiln::index_t i) {
  out(i, 0) = kiln::max(a(i), b(i));
  out(i, 1) = kiln::min(a(i), b(i));
  out(i, 2) = kiln::fmax(a(i), b(i));
  out(i, 3) = kiln::fmin(a(i), b(i));
});
)";

TEST_F(RuntimeTest, MinAndMaxPropagateNanFminAndFmaxDropIt) {
  rt.register_kernel(kMinMax, "min_max.kiln");
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> a = {nan, 1.0, 1.0, -2.0}, b = {1.0, nan, 3.0, -5.0};
  for (Mode mode : {Mode::specialised, Mode::generic}) {
    std::vector<double> out(16, 0.0);
    rt.kernel("min_max", Spec().set("n", 4), mode)(c_array(a.data(), {4}), c_array(b.data(), {4}),
                                                    c_array(out.data(), {4, 4}));
    for (int i = 0; i < 2; ++i) {
      EXPECT_TRUE(std::isnan(out[std::size_t(4 * i + 0)])) << "max, row " << i;
      EXPECT_TRUE(std::isnan(out[std::size_t(4 * i + 1)])) << "min, row " << i;
      EXPECT_EQ(out[std::size_t(4 * i + 2)], 1.0) << "fmax, row " << i;
      EXPECT_EQ(out[std::size_t(4 * i + 3)], 1.0) << "fmin, row " << i;
    }
    EXPECT_EQ(std::vector<double>(out.begin() + 8, out.end()),
              (std::vector<double>{3.0, 1.0, 3.0, 1.0, -2.0, -5.0, -2.0, -5.0}));
  }
}

}  // namespace
}  // namespace kiln::testing
