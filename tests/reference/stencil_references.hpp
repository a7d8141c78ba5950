// Independent references for the ICON kernels of kernels_src/ (names follow
// icon4py): plain loops over the domain, written from the formulas below and
// not from the kernel sources, compiled by the host compiler, never by kiln.
// Tests run a kernel and its reference on the same inputs and compare.
//
// Conventions, the same for every function:
// - The domain is the box [horizontal_start, horizontal_end) x
//   [vertical_start, vertical_end). Outputs are written inside it only;
//   every other value is left as it was. The one exception is z_nabla2_c of
//   apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence,
//   written at every cell a domain cell reaches (see there).
// - Parameters come as the kernel takes them: domain, static values, then
//   arrays and scalars in the kernel's argument order, tables last.
// - Fields are logical [horizontal][level], Coeffs [horizontal][neighbour]
//   (both Field, row-major); one-dimensional arrays are std::vector<double>.
//   Every access is range-checked (std::out_of_range): a reference never
//   reads or writes outside what it was given.
// - A -1 in a connectivity table (a neighbour outside a limited-area grid)
//   drops that neighbour's term from a sum: it adds nothing, and its
//   coefficient is not read.
// - Sums run over the neighbours in table order, left to right, starting from
//   0.0 (kernels may fuse multiply-adds and reorder; compare with a tolerance).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "granule/grid.hpp"

namespace kiln::reference {

using granule::Connectivity;

// [nh][nk] float64 values, row-major (the second index contiguous).
struct Field {
  std::vector<double> v;
  std::int64_t nh = 0, nk = 0;

  Field() = default;
  Field(std::int64_t nh, std::int64_t nk, double fill = 0.0);
  // Range-checked: throws std::out_of_range outside [0, nh) x [0, nk).
  double& operator()(std::int64_t h, std::int64_t k) { return v[offset(h, k)]; }
  double operator()(std::int64_t h, std::int64_t k) const { return v[offset(h, k)]; }
  std::size_t offset(std::int64_t h, std::int64_t k) const;
};

// Per-entity coefficients [n][n_neighbours]: slot j goes with column j of the
// kernel's connectivity table.
using Coeffs = Field;

struct Domain {
  std::int64_t horizontal_start = 0, horizontal_end = 0;
  std::int64_t vertical_start = 0, vertical_end = 0;
};

// Cells, C2E [nC][3]. For c, k in the domain:
//   div[c][k]  = sum_j vn[C2E[c][j]][k] * geofac_div[c][j]
//   kh_c[c][k] = (sum_j kh_smag_ec[C2E[c][j]][k] * e_bln_c_s[c][j]) / diff_multfac_smag[k]
void temporary_fields_for_turbulence_diagnostics(const Domain& domain, const Field& kh_smag_ec, const Field& vn,
                                                 const Coeffs& e_bln_c_s, const Coeffs& geofac_div,
                                                 const std::vector<double>& diff_multfac_smag, Field& kh_c,
                                                 Field& div, const Connectivity& c2e);

// Edges, E2C2V [nE][4]; primal_normal_vert_v1/v2 are Coeffs [nE][4]; the
// one-dimensional arrays are [nE] except diff_multfac_vn [nk]. For e, k in the
// domain, with v_j = E2C2V[e][j], z2 = z_nabla2_e[e][k], A = area_edge[e]:
//   tang = sum_{j=0,1} (u_vert[v_j][k] * v1[e][j] + v_vert[v_j][k] * v2[e][j])
//   norm = the same over j = 2, 3
//   nab4 = 4 * ((norm - 2 z2) * inv_vert_vert_length[e]^2 + (tang - 2 z2) * inv_primal_edge_length[e]^2)
// and vn[e][k] += (vn is read, then written)
//   e >= start_2nd_nudge_line_idx_e, limited_area:
//       A * (max(nudgezone_diff * nudgecoeff_e[e], kh_smag_e[e][k]) * z2 - A * diff_multfac_vn[k] * nab4)
//   e >= start_2nd_nudge_line_idx_e, global:
//       A * (kh_smag_e[e][k] * z2 - diff_multfac_vn[k] * nab4 * A)
//   e <  start_2nd_nudge_line_idx_e, limited_area:  A * fac_bdydiff_v * z2
//   e <  start_2nd_nudge_line_idx_e, global:        nothing (vn unchanged).
// Only the branch taken reads its inputs: the last two never read u_vert,
// v_vert, the normals, nudgecoeff_e, kh_smag_e or diff_multfac_vn.
void apply_diffusion_to_vn(const Domain& domain, std::int64_t start_2nd_nudge_line_idx_e, bool limited_area,
                           const Field& u_vert, const Field& v_vert, const Coeffs& primal_normal_vert_v1,
                           const Coeffs& primal_normal_vert_v2, const Field& z_nabla2_e,
                           const std::vector<double>& inv_vert_vert_length,
                           const std::vector<double>& inv_primal_edge_length, const std::vector<double>& area_edge,
                           const Field& kh_smag_e, const std::vector<double>& diff_multfac_vn,
                           const std::vector<double>& nudgecoeff_e, Field& vn, double nudgezone_diff,
                           double fac_bdydiff_v, const Connectivity& e2c2v);

// Cells, C2E2CO [nC][4] (the cell itself, then its neighbours); geofac_n2s,
// geofac_grg_x/y are Coeffs [nC][4], area [nC], diff_multfac_n2w [nk].
// 1. z_nabla2_c[n][k] = sum_j w_old[C2E2CO[n][j]][k] * geofac_n2s[n][j] for
//    every cell n = C2E2CO[c][i] (c in the domain, i = 0..3, n >= 0; so also
//    cells outside [horizontal_start, horizontal_end)) and k in the domain.
// 2. For c, k in the domain, with n_j = C2E2CO[c][j]:
//    dwdx[c][k] = sum_j geofac_grg_x[c][j] * w_old[n_j][k], dwdy likewise
//      with geofac_grg_y, only when type_shear == 2 and k > 0 (else untouched);
//    w[c][k] = w_old[c][k], except for interior_idx <= c < halo_idx:
//      w[c][k] = w_old[c][k] - diff_multfac_w * area[c]^2 * sum_j z_nabla2_c[n_j][k] * geofac_n2s[c][j]
//      plus diff_multfac_n2w[k] * area[c] * z_nabla2_c[c][k] when 0 < k < nrdmax
//    (the values of step 1, whatever z_nabla2_c held before).
void apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence(
    const Domain& domain, int type_shear, std::int64_t nrdmax, std::int64_t interior_idx, std::int64_t halo_idx,
    const std::vector<double>& area, const Coeffs& geofac_n2s, const Coeffs& geofac_grg_x, const Coeffs& geofac_grg_y,
    const Field& w_old, Field& w, Field& dwdx, Field& dwdy, double diff_multfac_w,
    const std::vector<double>& diff_multfac_n2w, Field& z_nabla2_c, const Connectivity& c2e2co);

// Vertices, V2E [nV][6]; ptr_coeff_1/2 are Coeffs [nV][6]. For v, k in the
// domain, skipping e = V2E[v][j] == -1:
//   p_u_out[v][k] = sum_j ptr_coeff_1[v][j] * p_e_in[e][k], p_v_out likewise with ptr_coeff_2.
void mo_intp_rbf_rbf_vec_interpol_vertex(const Domain& domain, const Field& p_e_in, const Coeffs& ptr_coeff_1,
                                         const Coeffs& ptr_coeff_2, Field& p_u_out, Field& p_v_out,
                                         const Connectivity& v2e);

// Cell columns. Requires vertical_start >= 1 (level k - 1 is read; throws
// std::invalid_argument otherwise); z_alpha and z_w_expl have a level more
// (k + 1 is read up to vertical_end). vwind_impl_wgt is [nC]. For each c in
// the domain, forward from (cq, dw) = (0, 0) for k = vertical_start ..
// vertical_end - 1:
//   g   = dtime * cpd * vwind_impl_wgt[c] * theta_v_ic[c][k] / ddqz_z_half[c][k]
//   a   = -g * z_beta[c][k-1] * z_alpha[c][k-1]
//   cc  = -g * z_beta[c][k] * z_alpha[c][k+1]
//   b   = 1 + g * z_alpha[c][k] * (z_beta[c][k-1] + z_beta[c][k])
//   d   = z_w_expl[c][k] - g * (z_exner_expl[c][k-1] - z_exner_expl[c][k])
//   nrm = 1 / (b + a * cq);  cq = -cc * nrm;  dw = (d - a * dw) * nrm
//   z_q[c][k] = cq;  w[c][k] = dw
// then back from s = 0 for k = vertical_end - 1 down to vertical_start:
//   s = w[c][k] + s * z_q[c][k];  w[c][k] = s
// (so w at vertical_end - 1 keeps its forward value). w is output only: its
// values before the call are never read.
void solve_tridiagonal_matrix_for_w(const Domain& domain, const std::vector<double>& vwind_impl_wgt,
                                    const Field& theta_v_ic, const Field& ddqz_z_half, const Field& z_alpha,
                                    const Field& z_beta, const Field& z_w_expl, const Field& z_exner_expl, Field& z_q,
                                    Field& w, double dtime, double cpd);

// Cells. Requires vertical_start >= 1 (level k - 1 is read; throws
// std::invalid_argument otherwise). For c, k in the domain:
//   interpolation_to_half_levels[c][k] = wgtfac_c[c][k] * interpolant[c][k]
//                                        + (1 - wgtfac_c[c][k]) * interpolant[c][k-1]
void interpolate_cell_field_to_half_levels(const Domain& domain, const Field& wgtfac_c, const Field& interpolant,
                                           Field& interpolation_to_half_levels);

}  // namespace kiln::reference
