// The kernel references of tests/reference on tiny cases computed by hand:
// values inside the domain, and everything outside it left alone.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/reference/stencil_references.hpp"

namespace kiln::reference {
namespace {

constexpr double kUntouched = -999.0;  // what outputs hold before a call

Connectivity table(std::int64_t rows, std::int64_t cols, std::vector<std::int32_t> data) {
  return Connectivity{std::move(data), rows, cols};
}

// A [rows.size()][levels] field whose row h holds rows[h] at every level.
Field by_row(const std::vector<double>& rows, std::int64_t levels) {
  Field f(static_cast<std::int64_t>(rows.size()), levels);
  for (std::int64_t h = 0; h < f.nh; ++h)
    for (std::int64_t k = 0; k < levels; ++k) f(h, k) = rows[static_cast<std::size_t>(h)];
  return f;
}

// A Coeffs [rows.size()][cols] from its rows.
Coeffs coeffs(const std::vector<std::vector<double>>& rows) {
  Coeffs c(static_cast<std::int64_t>(rows.size()), static_cast<std::int64_t>(rows.front().size()));
  for (std::int64_t h = 0; h < c.nh; ++h)
    for (std::int64_t j = 0; j < c.nk; ++j) c(h, j) = rows[static_cast<std::size_t>(h)][static_cast<std::size_t>(j)];
  return c;
}

TEST(ReferenceField, AccessOutsideTheFieldThrows) {
  Field f(2, 3);
  f(1, 2) = 4.0;
  EXPECT_EQ(f.v[5], 4.0);  // row-major
  EXPECT_THROW(f(2, 0), std::out_of_range);
  EXPECT_THROW(f(0, 3), std::out_of_range);
  EXPECT_THROW(f(-1, 0), std::out_of_range);
}

TEST(References, TemporaryFieldsForTurbulenceDiagnostics) {
  const Connectivity c2e = table(2, 3, {0, 1, 2, 2, 3, 4});
  Field vn(5, 2);  // vn[e][k] = 10 e + k
  for (std::int64_t e = 0; e < 5; ++e)
    for (std::int64_t k = 0; k < 2; ++k) vn(e, k) = 10.0 * static_cast<double>(e) + static_cast<double>(k);
  const Field kh_smag_ec = by_row({1, 2, 3, 4, 5}, 2);
  const Coeffs geofac_div = coeffs({{7, 7, 7}, {1, 2, -1}});
  const Coeffs e_bln_c_s = coeffs({{7, 7, 7}, {0.5, 0.25, 1}});
  Field kh_c(2, 2, kUntouched), div(2, 2, kUntouched);

  temporary_fields_for_turbulence_diagnostics({1, 2, 0, 2}, kh_smag_ec, vn, e_bln_c_s, geofac_div, {2.0, 0.5}, kh_c,
                                              div, c2e);
  EXPECT_DOUBLE_EQ(div(1, 0), 20 + 60 - 40);
  EXPECT_DOUBLE_EQ(div(1, 1), 21 + 62 - 41);
  EXPECT_DOUBLE_EQ(kh_c(1, 0), (1.5 + 1 + 5) / 2.0);
  EXPECT_DOUBLE_EQ(kh_c(1, 1), (1.5 + 1 + 5) / 0.5);
  EXPECT_EQ(div(0, 0), kUntouched);
  EXPECT_EQ(kh_c(0, 1), kUntouched);
}

// Edges 0..3 in the domain at level 1 (level 0 and edge 4 outside), the
// second nudging line starting at edge 1. Edges 1, 2 see vertices 0..3, edge 3
// misses its last far vertex. Per edge: tang = 1, norm = 5.5 (edge 3: 1.5),
// z2 = 0.25, ivv = 2, ipe = 0.5, so nab4 = 4 ((norm - 0.5) 4 + 0.5 * 0.25) =
// 80.5 (edge 3: 16.5); A = 0.5, kh_smag_e = 0.3, diff_multfac_vn = 0.01.
struct VnCase {
  Connectivity e2c2v = table(5, 4, {0, 1, 2, -1, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, -1, 0, 1, 2, 3});
  Field u_vert = by_row({1, 2, 3, 4}, 2), v_vert = by_row({10, 20, 30, 40}, 2);
  Coeffs v1 = coeffs({{2, -1, 0.5, 2}, {2, -1, 0.5, 2}, {2, -1, 0.5, 2}, {2, -1, 0.5, 2}, {2, -1, 0.5, 2}});
  Coeffs v2 = coeffs({{0.1, 0, 0, -0.1}, {0.1, 0, 0, -0.1}, {0.1, 0, 0, -0.1}, {0.1, 0, 0, -0.1}, {0.1, 0, 0, -0.1}});
  Field z_nabla2_e = by_row({0.25, 0.25, 0.25, 0.25, 0.25}, 2);
  Field kh_smag_e = by_row({0.3, 0.3, 0.3, 0.3, 0.3}, 2);
  Field vn = by_row({1, 1, 1, 1, 1}, 2);

  void run(bool limited_area) {
    const std::vector<double> ivv(5, 2.0), ipe(5, 0.5), area(5, 0.5);
    const std::vector<double> nudgecoeff_e = {0.1, 0.1, 0.5, 0.1, 0.1};
    apply_diffusion_to_vn({0, 4, 1, 2}, 1, limited_area, u_vert, v_vert, v1, v2, z_nabla2_e, ivv, ipe, area,
                          kh_smag_e, {0.01, 0.01}, nudgecoeff_e, vn, 2.0 /* nudgezone_diff */,
                          0.2 /* fac_bdydiff_v */, e2c2v);
  }
};

TEST(References, ApplyDiffusionToVnLimitedArea) {
  VnCase c;
  c.run(true);
  EXPECT_DOUBLE_EQ(c.vn(0, 1), 1 + 0.5 * 0.2 * 0.25);                      // before the nudge line
  EXPECT_DOUBLE_EQ(c.vn(1, 1), 1 + 0.5 * (0.3 * 0.25 - 0.5 * 0.01 * 80.5));  // max(2 * 0.1, 0.3) = 0.3
  EXPECT_DOUBLE_EQ(c.vn(2, 1), 1 + 0.5 * (1.0 * 0.25 - 0.5 * 0.01 * 80.5));  // max(2 * 0.5, 0.3) = 1
  EXPECT_DOUBLE_EQ(c.vn(3, 1), 1 + 0.5 * (0.3 * 0.25 - 0.5 * 0.01 * 16.5));  // -1 vertex skipped
  EXPECT_EQ(c.vn(4, 1), 1.0);
  EXPECT_EQ(c.vn(1, 0), 1.0);
}

TEST(References, ApplyDiffusionToVnGlobal) {
  VnCase c;
  c.run(false);
  EXPECT_EQ(c.vn(0, 1), 1.0);  // before the nudge line: unchanged
  EXPECT_DOUBLE_EQ(c.vn(1, 1), 1 + 0.5 * (0.3 * 0.25 - 0.01 * 80.5 * 0.5));
  EXPECT_DOUBLE_EQ(c.vn(2, 1), 1 + 0.5 * (0.3 * 0.25 - 0.01 * 80.5 * 0.5));  // nudging ignored
  EXPECT_DOUBLE_EQ(c.vn(3, 1), 1 + 0.5 * (0.3 * 0.25 - 0.01 * 16.5 * 0.5));
  EXPECT_EQ(c.vn(4, 1), 1.0);
  EXPECT_EQ(c.vn(2, 0), 1.0);
}

// Four cells, cell 1 the whole domain (levels 0, 1); cells 0 and 3 miss a
// neighbour. geofac_n2s = (-3, 1, 1, 1) everywhere, so
//   z2 = (7, 10), (12, 15), (-4, -9), (-29, -35) for cells 0..3,
// and sum_j z2[n_j] geofac_n2s[1][j] = (-62, -79).
struct WCase {
  Connectivity c2e2co = table(4, 4, {0, 1, 2, -1, 1, 0, 2, 3, 2, 0, 1, 3, 3, 1, 2, -1});
  Field w_old{4, 2};
  Coeffs n2s = coeffs({{-3, 1, 1, 1}, {-3, 1, 1, 1}, {-3, 1, 1, 1}, {-3, 1, 1, 1}});
  Coeffs grg_x = coeffs({{9, 9, 9, 9}, {1, 0.5, -1, 2}, {9, 9, 9, 9}, {9, 9, 9, 9}});
  Coeffs grg_y = coeffs({{9, 9, 9, 9}, {0, 1, 1, 0}, {9, 9, 9, 9}, {9, 9, 9, 9}});
  Field w{4, 2, kUntouched}, dwdx{4, 2, kUntouched}, dwdy{4, 2, kUntouched}, z2{4, 2, kUntouched};

  WCase() {
    const double values[4][2] = {{1, 2}, {3, 5}, {7, 11}, {13, 17}};
    for (int c = 0; c < 4; ++c)
      for (int k = 0; k < 2; ++k) w_old(c, k) = values[c][k];
  }
  void run(int type_shear, std::int64_t interior_idx) {
    apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence(
        {1, 2, 0, 2}, type_shear, 2 /* nrdmax */, interior_idx, 2 /* halo_idx */, {9, 2, 9, 9}, n2s, grg_x, grg_y,
        w_old, w, dwdx, dwdy, 0.5 /* diff_multfac_w */, {0.5, 0.25}, z2, c2e2co);
  }
};

TEST(References, ApplyDiffusionToWOnAnInteriorCell) {
  WCase c;
  c.run(2, 1);
  // z2 at every cell the domain reaches, -1 neighbours skipped.
  const double z2[4][2] = {{7, 10}, {12, 15}, {-4, -9}, {-29, -35}};
  for (int cell = 0; cell < 4; ++cell)
    for (int k = 0; k < 2; ++k) EXPECT_DOUBLE_EQ(c.z2(cell, k), z2[cell][k]) << cell << "," << k;
  // w_old - 0.5 * 2^2 * sum, plus 0.25 * 2 * z2 at level 1 (0 < 1 < nrdmax).
  EXPECT_DOUBLE_EQ(c.w(1, 0), 3 + 2.0 * 62);
  EXPECT_DOUBLE_EQ(c.w(1, 1), 5 + 2.0 * 79 + 0.25 * 2 * 15);
  // Gradients above level 0 only.
  EXPECT_EQ(c.dwdx(1, 0), kUntouched);
  EXPECT_DOUBLE_EQ(c.dwdx(1, 1), 5 + 0.5 * 2 - 11 + 2 * 17);
  EXPECT_DOUBLE_EQ(c.dwdy(1, 1), 2 + 11);
  for (int cell : {0, 2, 3}) {
    EXPECT_EQ(c.w(cell, 1), kUntouched);
    EXPECT_EQ(c.dwdx(cell, 1), kUntouched);
  }
}

TEST(References, ApplyDiffusionToWOutsideTheInteriorCopiesWOld) {
  WCase c;
  c.run(1, 2);  // no gradients; cell 1 before interior_idx
  EXPECT_EQ(c.w(1, 0), 3.0);
  EXPECT_EQ(c.w(1, 1), 5.0);
  EXPECT_EQ(c.dwdx(1, 1), kUntouched);
  EXPECT_EQ(c.dwdy(1, 1), kUntouched);
  EXPECT_DOUBLE_EQ(c.z2(3, 1), -35);  // still computed
}

TEST(References, RbfVecInterpolVertexSkipsMissingEdges) {
  const Connectivity v2e = table(2, 6, {0, 1, -1, 2, -1, -1, 0, 1, 2, 0, 1, 2});
  const Field p_e_in = by_row({1, 10, 100}, 1);
  // 99 sits in the slots of missing edges: it must not count.
  const Coeffs c1 = coeffs({{1, 2, 99, 3, 99, 99}, {1, 1, 1, 1, 1, 1}});
  const Coeffs c2 = coeffs({{0.5, 0, 99, -1, 99, 99}, {1, 1, 1, 1, 1, 1}});
  Field u(2, 1, kUntouched), v(2, 1, kUntouched);
  mo_intp_rbf_rbf_vec_interpol_vertex({0, 1, 0, 1}, p_e_in, c1, c2, u, v, v2e);
  EXPECT_DOUBLE_EQ(u(0, 0), 1 + 20 + 300);
  EXPECT_DOUBLE_EQ(v(0, 0), 0.5 - 100);
  EXPECT_EQ(u(1, 0), kUntouched);
  EXPECT_EQ(v(1, 0), kUntouched);
}

// One column, levels 1 and 2 of 4, with g = 1, alpha = beta = 1 and no
// exner term: 3 w1 - w2 = 1, -w1 + 3 w2 = 2, so w = (5/8, 7/8), and the
// forward sweep leaves z_q = (1/3, 3/8).
TEST(References, SolveTridiagonalMatrixForWOnATwoLevelSystem) {
  const Field ones(1, 5, 1.0), zeros(1, 5, 0.0);
  Field z_w_expl(1, 5, 0.0);
  z_w_expl(0, 1) = 1.0;
  z_w_expl(0, 2) = 2.0;
  Field z_q(1, 4, kUntouched), w(1, 5, kUntouched);
  solve_tridiagonal_matrix_for_w({0, 1, 1, 3}, {1.0}, ones, ones, ones, ones, z_w_expl, zeros, z_q, w, 1.0, 1.0);
  EXPECT_DOUBLE_EQ(w(0, 1), 5.0 / 8.0);
  EXPECT_DOUBLE_EQ(w(0, 2), 7.0 / 8.0);
  EXPECT_DOUBLE_EQ(z_q(0, 1), 1.0 / 3.0);
  EXPECT_DOUBLE_EQ(z_q(0, 2), 3.0 / 8.0);
  EXPECT_EQ(w(0, 0), kUntouched);
  EXPECT_EQ(w(0, 3), kUntouched);
  EXPECT_EQ(z_q(0, 3), kUntouched);
}

// On random columns the result solves the tridiagonal system that the
// coefficients define, with w = 0 above and below the domain.
TEST(References, SolveTridiagonalMatrixForWSolvesItsSystem) {
  const std::int64_t cells = 3, levels = 12;
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> draw(0.5, 1.5);
  auto random = [&](std::int64_t nk) {
    Field f(cells, nk);
    for (double& x : f.v) x = draw(rng);
    return f;
  };
  const Field theta_v_ic = random(levels), ddqz = random(levels), alpha = random(levels + 1), beta = random(levels),
              w_expl = random(levels + 1), exner = random(levels);
  const std::vector<double> wgt = {0.4, 0.6, 0.5};
  const double dtime = 0.01, cpd = 100.0;
  Field z_q(cells, levels), w(cells, levels + 1);
  solve_tridiagonal_matrix_for_w({0, cells, 1, levels}, wgt, theta_v_ic, ddqz, alpha, beta, w_expl, exner, z_q, w,
                                 dtime, cpd);
  for (std::int64_t c = 0; c < cells; ++c) {
    for (std::int64_t k = 1; k < levels; ++k) {
      const double g = dtime * cpd * wgt[static_cast<std::size_t>(c)] * theta_v_ic(c, k) / ddqz(c, k);
      const double a = -g * beta(c, k - 1) * alpha(c, k - 1), cc = -g * beta(c, k) * alpha(c, k + 1);
      const double b = 1 + g * alpha(c, k) * (beta(c, k - 1) + beta(c, k));
      const double d = w_expl(c, k) - g * (exner(c, k - 1) - exner(c, k));
      const double above = k > 1 ? w(c, k - 1) : 0.0, below = k + 1 < levels ? w(c, k + 1) : 0.0;
      EXPECT_NEAR(a * above + b * w(c, k) + cc * below, d, 1e-12) << "cell " << c << " level " << k;
    }
  }
}

TEST(References, InterpolateCellFieldToHalfLevels) {
  const Field wgtfac = by_row({0.25}, 3);
  Field interpolant(1, 3);
  interpolant(0, 0) = 1;
  interpolant(0, 1) = 5;
  interpolant(0, 2) = 9;
  Field out(1, 3, kUntouched);
  interpolate_cell_field_to_half_levels({0, 1, 1, 3}, wgtfac, interpolant, out);
  EXPECT_DOUBLE_EQ(out(0, 1), 0.25 * 5 + 0.75 * 1);
  EXPECT_DOUBLE_EQ(out(0, 2), 0.25 * 9 + 0.75 * 5);
  EXPECT_EQ(out(0, 0), kUntouched);
}

TEST(References, KernelsReadingTheLevelAboveRefuseLevelZero) {
  Field f(1, 3, 1.0), out(1, 3);
  EXPECT_THROW(interpolate_cell_field_to_half_levels({0, 1, 0, 2}, f, f, out), std::invalid_argument);
  EXPECT_THROW(solve_tridiagonal_matrix_for_w({0, 1, 0, 2}, {1.0}, f, f, f, f, f, f, out, out, 1.0, 1.0),
               std::invalid_argument);
}

}  // namespace
}  // namespace kiln::reference
