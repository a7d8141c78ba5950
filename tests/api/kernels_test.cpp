// The kernels of kernels_src/: specialised equals generic exactly, both
// match an independent reference, and nothing outside the domain changes.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

class Kernels : public RuntimeTest, public ::testing::WithParamInterface<bool> {};

TEST_P(Kernels, UpdateThetaAndExnerSpecialisedEqualsGenericAndReference) {
  const bool fortran = GetParam();
  const int cells = 97, levels = 13, hs = 5, he = 90, vs = 2, ve = 11;
  ThetaCase spec_case(cells, levels, fortran), generic_case(cells, levels, fortran), ref(cells, levels, fortran);
  spec_case.run(rt.kernel("update_theta_and_exner", spec_case.spec(hs, he, vs, ve)));
  generic_case.run(rt.kernel("update_theta_and_exner", generic_case.spec(hs, he, vs, ve), Mode::generic));
  ref.reference(hs, he, vs, ve);

  EXPECT_EQ(spec_case.theta_v, generic_case.theta_v);
  EXPECT_EQ(spec_case.exner, generic_case.exner);
  expect_close(spec_case.theta_v, ref.theta_v);
  expect_close(spec_case.exner, ref.exner);
}

TEST_P(Kernels, UpdateThetaAndExnerLeavesPointsOutsideTheDomainUntouched) {
  const bool fortran = GetParam();
  const int cells = 64, levels = 10, hs = 3, he = 60, vs = 1, ve = 9;
  for (Mode mode : {Mode::specialised, Mode::generic}) {
    ThetaCase run_case(cells, levels, fortran);
    const ThetaCase before = run_case;
    run_case.run(rt.kernel("update_theta_and_exner", run_case.spec(hs, he, vs, ve), mode));
    for (int c = 0; c < cells; ++c)
      for (int k = 0; k < levels; ++k) {
        const bool inside = c >= hs && c < he && k >= vs && k < ve;
        const std::size_t i = run_case.at(c, k);
        if (inside) {
          EXPECT_NE(run_case.theta_v[i], before.theta_v[i]) << c << "," << k;
        } else {
          // Bitwise: compare the representations, not the values.
          EXPECT_EQ(std::memcmp(&run_case.theta_v[i], &before.theta_v[i], sizeof(double)), 0) << c << "," << k;
          EXPECT_EQ(std::memcmp(&run_case.exner[i], &before.exner[i], sizeof(double)), 0) << c << "," << k;
        }
      }
  }
}

INSTANTIATE_TEST_SUITE_P(Layouts, Kernels, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "Fortran" : "C"; });

struct StencilCase {
  int nx, ny, nz;
  std::vector<double> in, out;
  StencilCase(int x, int y, int z)
      : nx(x), ny(y), nz(z), in(random_field(std::size_t(x) * y * z, 0, 1, 7)),
        out(std::size_t(x) * y * z, -7.0) {}
  std::size_t at(int z, int y, int x) const { return (std::size_t(z) * ny + y) * nx + x; }
  kiln_arg v_in() { return c_array(in.data(), {nz, ny, nx}); }
  kiln_arg v_out() { return c_array(out.data(), {nz, ny, nx}); }
  Spec spec() {
    Spec s;
    s.set("nx", nx).set("ny", ny).set("nz", nz).set("c0", 0.4).set("cx", 0.1).set("cy", 0.2).set("cz", 0.3);
    return s.strides_of("in", v_in()).strides_of("out", v_out());
  }
};

using Stencil = RuntimeTest;

TEST_F(Stencil, Stencil7SpecialisedEqualsGenericAndReferenceAndKeepsTheBoundary) {
  StencilCase s(19, 11, 7), g(19, 11, 7);
  rt.kernel("stencil7", s.spec())(s.v_in(), s.v_out());
  rt.kernel("stencil7", g.spec(), Mode::generic)(g.v_in(), g.v_out());
  EXPECT_EQ(s.out, g.out);
  for (int z = 0; z < s.nz; ++z)
    for (int y = 0; y < s.ny; ++y)
      for (int x = 0; x < s.nx; ++x) {
        const bool interior = z > 0 && z < s.nz - 1 && y > 0 && y < s.ny - 1 && x > 0 && x < s.nx - 1;
        if (!interior) {
          ASSERT_EQ(s.out[s.at(z, y, x)], -7.0);
          continue;
        }
        const auto& in = s.in;
        const double want = 0.4 * in[s.at(z, y, x)] + 0.1 * (in[s.at(z, y, x - 1)] + in[s.at(z, y, x + 1)]) +
                            0.2 * (in[s.at(z, y - 1, x)] + in[s.at(z, y + 1, x)]) +
                            0.3 * (in[s.at(z - 1, y, x)] + in[s.at(z + 1, y, x)]);
        ASSERT_NEAR(s.out[s.at(z, y, x)], want, 1e-14 * std::fabs(want)) << z << "," << y << "," << x;
      }
}

}  // namespace
}  // namespace kiln::testing
