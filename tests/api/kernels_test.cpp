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


// Scalars travel as kiln_args made for the call; arrays are pointed at where
// the caller holds them. Both call forms reach the kernel with the same values.
constexpr const char* kAxpby = R"(#pragma kiln kernel axpby
#pragma kiln array double y[1]
#pragma kiln array double x[1]
#pragma kiln scalar double a
#pragma kiln scalar int32 shift
#pragma kiln scalar bool negate
#pragma kiln domain n
for (kiln::index_t i = 0; i < n; ++i) y(i) = (negate ? -a : a) * x(i) + y(i) + shift;
)";

using ScalarArguments = RuntimeTest;

TEST_F(ScalarArguments, ReachTheKernelThroughBothCallForms) {
  rt.register_kernel(kAxpby, "axpby.kiln");
  const std::vector<double> x = {1.0, 2.0, 3.0};
  for (Mode mode : {Mode::specialised, Mode::generic}) {
    std::vector<double> y1 = {10.0, 20.0, 30.0}, y2 = y1;
    const Kernel k = rt.kernel("axpby", Spec().set("n", 3), mode);
    k(c_array(y1.data(), {3}), c_array(x.data(), {3}), 0.5, std::int32_t{4}, true);
    const kiln_arg gathered[] = {c_array(y2.data(), {3}), c_array(x.data(), {3}), scalar(0.5),
                                 scalar(std::int32_t{4}), scalar(true)};
    k.invoke(gathered);
    EXPECT_EQ(y1, (std::vector<double>{13.5, 23.0, 32.5}));
    EXPECT_EQ(y2, y1);
  }
}

using Declarations = RuntimeTest;

TEST_F(Declarations, ListArgumentsAndParametersInDeclarationOrder) {
  rt.register_kernel(kAxpby, "axpby.kiln");
  const KernelDeclaration d = rt.declaration("axpby");
  EXPECT_EQ(d.name, "axpby");
  ASSERT_EQ(d.arguments.size(), 5u);
  EXPECT_EQ(d.arguments[0].name, "y");
  EXPECT_EQ(d.arguments[0].type, ElementType::f64);
  EXPECT_EQ(d.arguments[0].rank, 1);
  EXPECT_EQ(d.arguments[3].name, "shift");
  EXPECT_EQ(d.arguments[3].type, ElementType::i32);
  EXPECT_EQ(d.arguments[3].rank, 0);
  EXPECT_EQ(d.arguments[4].type, ElementType::boolean);
  ASSERT_EQ(d.parameters.size(), 1u);
  EXPECT_EQ(d.parameters[0].name, "n");
  EXPECT_TRUE(d.parameters[0].domain);

  const KernelDeclaration theta = rt.declaration("update_theta_and_exner");
  ASSERT_EQ(theta.parameters.size(), 5u);
  EXPECT_EQ(theta.parameters[4].name, "rd_o_cvd");
  EXPECT_FALSE(theta.parameters[4].domain);
  EXPECT_EQ(theta.parameters[4].type, ElementType::f64);
  EXPECT_THROW(rt.declaration("no_such_kernel"), UnknownKernelError);
}

}  // namespace
}  // namespace kiln::testing
