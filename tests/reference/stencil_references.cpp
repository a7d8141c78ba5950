#include "tests/reference/stencil_references.hpp"

#include <algorithm>
#include <set>
#include <stdexcept>
#include <string>

namespace kiln::reference {

Field::Field(std::int64_t nh_, std::int64_t nk_, double fill)
    : v(static_cast<std::size_t>(nh_ * nk_), fill), nh(nh_), nk(nk_) {}

std::size_t Field::offset(std::int64_t h, std::int64_t k) const {
  if (h < 0 || h >= nh || k < 0 || k >= nk) {
    throw std::out_of_range("reference Field: (" + std::to_string(h) + ", " + std::to_string(k) +
                            ") outside [" + std::to_string(nh) + "][" + std::to_string(nk) + "]");
  }
  return static_cast<std::size_t>(h * nk + k);
}

namespace {

void require_level_below(const Domain& domain, const char* kernel) {
  if (domain.vertical_start < 1) {
    throw std::invalid_argument(std::string(kernel) + ": vertical_start must be >= 1 (level k - 1 is read), got " +
                                std::to_string(domain.vertical_start));
  }
}

// NumPy's maximum (GT4Py's, icon4py's): a NaN in either operand gives NaN.
double maximum(double a, double b) { return a != a ? a : b != b ? b : std::max(a, b); }

// Neighbour j of row r, range-checked like Field.
std::int32_t neighbour(const Connectivity& table, std::int64_t r, std::int64_t j) {
  if (r < 0 || r >= table.rows || j < 0 || j >= table.cols) {
    throw std::out_of_range("reference table: (" + std::to_string(r) + ", " + std::to_string(j) + ") outside [" +
                            std::to_string(table.rows) + "][" + std::to_string(table.cols) + "]");
  }
  return table(r, j);
}

}  // namespace

void temporary_fields_for_turbulence_diagnostics(const Domain& domain, const Field& kh_smag_ec, const Field& vn,
                                                 const Coeffs& e_bln_c_s, const Coeffs& geofac_div,
                                                 const std::vector<double>& diff_multfac_smag, Field& kh_c,
                                                 Field& div, const Connectivity& c2e) {
  for (std::int64_t c = domain.horizontal_start; c < domain.horizontal_end; ++c) {
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      double div_sum = 0.0, kh_sum = 0.0;
      for (std::int64_t j = 0; j < c2e.cols; ++j) {
        const std::int32_t e = neighbour(c2e, c, j);
        if (e < 0) continue;
        div_sum += vn(e, k) * geofac_div(c, j);
        kh_sum += kh_smag_ec(e, k) * e_bln_c_s(c, j);
      }
      div(c, k) = div_sum;
      kh_c(c, k) = kh_sum / diff_multfac_smag.at(static_cast<std::size_t>(k));
    }
  }
}

void apply_diffusion_to_vn(const Domain& domain, std::int64_t start_2nd_nudge_line_idx_e, bool limited_area,
                           const Field& u_vert, const Field& v_vert, const Coeffs& primal_normal_vert_v1,
                           const Coeffs& primal_normal_vert_v2, const Field& z_nabla2_e,
                           const std::vector<double>& inv_vert_vert_length,
                           const std::vector<double>& inv_primal_edge_length, const std::vector<double>& area_edge,
                           const Field& kh_smag_e, const std::vector<double>& diff_multfac_vn,
                           const std::vector<double>& nudgecoeff_e, Field& vn, double nudgezone_diff,
                           double fac_bdydiff_v, const Connectivity& e2c2v) {
  for (std::int64_t e = domain.horizontal_start; e < domain.horizontal_end; ++e) {
    const std::size_t ei = static_cast<std::size_t>(e);
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      const double z2 = z_nabla2_e(e, k);
      const double area = area_edge.at(ei);
      if (e < start_2nd_nudge_line_idx_e) {
        if (limited_area) vn(e, k) += area * fac_bdydiff_v * z2;
        continue;
      }
      // Tangential (the edge's own vertices, j = 0, 1) and normal (the far
      // vertices, j = 2, 3) parts of the vector Laplacian's second pass.
      double tang = 0.0, norm = 0.0;
      for (std::int64_t j = 0; j < 4; ++j) {
        const std::int32_t v = neighbour(e2c2v, e, j);
        if (v < 0) continue;
        const double term = u_vert(v, k) * primal_normal_vert_v1(e, j) + v_vert(v, k) * primal_normal_vert_v2(e, j);
        if (j < 2) tang += term;
        else norm += term;
      }
      const double ivv = inv_vert_vert_length.at(ei), ipe = inv_primal_edge_length.at(ei);
      const double nab4 = 4.0 * ((norm - 2.0 * z2) * ivv * ivv + (tang - 2.0 * z2) * ipe * ipe);
      const double multfac = diff_multfac_vn.at(static_cast<std::size_t>(k));
      if (limited_area) {
        const double kh = maximum(nudgezone_diff * nudgecoeff_e.at(ei), kh_smag_e(e, k));
        vn(e, k) += area * (kh * z2 - area * multfac * nab4);
      } else {
        vn(e, k) += area * (kh_smag_e(e, k) * z2 - multfac * nab4 * area);
      }
    }
  }
}

namespace {

// sum_j values[C2E2CO[c][j]][k] * coeffs[c][j], skipping -1.
double sum_over_c2e2co(const Field& values, const Coeffs& coeffs, const Connectivity& c2e2co, std::int64_t c,
                       std::int64_t k) {
  double sum = 0.0;
  for (std::int64_t j = 0; j < c2e2co.cols; ++j) {
    const std::int32_t n = neighbour(c2e2co, c, j);
    if (n < 0) continue;
    sum += values(n, k) * coeffs(c, j);
  }
  return sum;
}

}  // namespace

void apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence(
    const Domain& domain, int type_shear, std::int64_t nrdmax, std::int64_t interior_idx, std::int64_t halo_idx,
    const std::vector<double>& area, const Coeffs& geofac_n2s, const Coeffs& geofac_grg_x, const Coeffs& geofac_grg_y,
    const Field& w_old, Field& w, Field& dwdx, Field& dwdy, double diff_multfac_w,
    const std::vector<double>& diff_multfac_n2w, Field& z_nabla2_c, const Connectivity& c2e2co) {
  // Step 1: the Laplacian of w_old at every cell the domain reaches.
  std::set<std::int32_t> reached;
  for (std::int64_t c = domain.horizontal_start; c < domain.horizontal_end; ++c) {
    for (std::int64_t j = 0; j < c2e2co.cols; ++j) {
      const std::int32_t n = neighbour(c2e2co, c, j);
      if (n >= 0) reached.insert(n);
    }
  }
  for (std::int32_t n : reached)
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k)
      z_nabla2_c(n, k) = sum_over_c2e2co(w_old, geofac_n2s, c2e2co, n, k);

  // Step 2: gradients and the diffused w over the domain.
  for (std::int64_t c = domain.horizontal_start; c < domain.horizontal_end; ++c) {
    const bool interior = interior_idx <= c && c < halo_idx;
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      if (type_shear == 2 && k > 0) {
        dwdx(c, k) = sum_over_c2e2co(w_old, geofac_grg_x, c2e2co, c, k);
        dwdy(c, k) = sum_over_c2e2co(w_old, geofac_grg_y, c2e2co, c, k);
      }
      if (!interior) {
        w(c, k) = w_old(c, k);
        continue;
      }
      const double a = area.at(static_cast<std::size_t>(c));
      double diffused = w_old(c, k) - diff_multfac_w * a * a * sum_over_c2e2co(z_nabla2_c, geofac_n2s, c2e2co, c, k);
      if (0 < k && k < nrdmax) diffused += diff_multfac_n2w.at(static_cast<std::size_t>(k)) * a * z_nabla2_c(c, k);
      w(c, k) = diffused;
    }
  }
}

void mo_intp_rbf_rbf_vec_interpol_vertex(const Domain& domain, const Field& p_e_in, const Coeffs& ptr_coeff_1,
                                         const Coeffs& ptr_coeff_2, Field& p_u_out, Field& p_v_out,
                                         const Connectivity& v2e) {
  for (std::int64_t v = domain.horizontal_start; v < domain.horizontal_end; ++v) {
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      double u = 0.0, w = 0.0;
      for (std::int64_t j = 0; j < v2e.cols; ++j) {
        const std::int32_t e = neighbour(v2e, v, j);
        if (e < 0) continue;
        u += ptr_coeff_1(v, j) * p_e_in(e, k);
        w += ptr_coeff_2(v, j) * p_e_in(e, k);
      }
      p_u_out(v, k) = u;
      p_v_out(v, k) = w;
    }
  }
}

void solve_tridiagonal_matrix_for_w(const Domain& domain, const std::vector<double>& vwind_impl_wgt,
                                    const Field& theta_v_ic, const Field& ddqz_z_half, const Field& z_alpha,
                                    const Field& z_beta, const Field& z_w_expl, const Field& z_exner_expl, Field& z_q,
                                    Field& w, double dtime, double cpd) {
  require_level_below(domain, "solve_tridiagonal_matrix_for_w");
  for (std::int64_t c = domain.horizontal_start; c < domain.horizontal_end; ++c) {
    const double wgt = vwind_impl_wgt.at(static_cast<std::size_t>(c));
    // Forward elimination (Thomas algorithm), carrying the previous level's
    // cq and dw; the level above the domain counts as eliminated to zero.
    double cq = 0.0, dw = 0.0;
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      const double g = dtime * cpd * wgt * theta_v_ic(c, k) / ddqz_z_half(c, k);
      const double a = -g * z_beta(c, k - 1) * z_alpha(c, k - 1);
      const double cc = -g * z_beta(c, k) * z_alpha(c, k + 1);
      const double b = 1.0 + g * z_alpha(c, k) * (z_beta(c, k - 1) + z_beta(c, k));
      const double d = z_w_expl(c, k) - g * (z_exner_expl(c, k - 1) - z_exner_expl(c, k));
      const double nrm = 1.0 / (b + a * cq);
      cq = -cc * nrm;
      dw = (d - a * dw) * nrm;
      z_q(c, k) = cq;
      w(c, k) = dw;
    }
    // Back substitution, bottom of the domain upwards.
    double s = 0.0;
    for (std::int64_t k = domain.vertical_end - 1; k >= domain.vertical_start; --k) {
      s = w(c, k) + s * z_q(c, k);
      w(c, k) = s;
    }
  }
}

void interpolate_cell_field_to_half_levels(const Domain& domain, const Field& wgtfac_c, const Field& interpolant,
                                           Field& interpolation_to_half_levels) {
  require_level_below(domain, "interpolate_cell_field_to_half_levels");
  for (std::int64_t c = domain.horizontal_start; c < domain.horizontal_end; ++c) {
    for (std::int64_t k = domain.vertical_start; k < domain.vertical_end; ++k) {
      const double wgt = wgtfac_c(c, k);
      interpolation_to_half_levels(c, k) = wgt * interpolant(c, k) + (1.0 - wgt) * interpolant(c, k - 1);
    }
  }
}

}  // namespace kiln::reference
