// The ICON kernels of kernels_src/ as stencil_harness.hpp checks them: for
// each kernel, how its arguments are made (fixed seeds, any layout), its
// independent reference (tests/reference), and the settings it is checked on
// per grid (a torus and a limited-area grid cut into ICON's zones). Shared by
// stencils_test.cpp (against the references, on the CPU) and
// gpu_stencils_test.cpp (the GPU against the CPU).
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <vector>

#include "granule/grid.hpp"
#include "tests/api/stencil_harness.hpp"
#include "tests/reference/stencil_references.hpp"

namespace kiln::testing {

using granule::Entity;
using granule::Grid;
using Tbl = granule::Table;

inline constexpr std::int64_t kLevels = 9;  // odd: vector loops get a remainder

inline Spec domain(std::int64_t hs, std::int64_t he, std::int64_t vs, std::int64_t ve) {
  Spec s;
  return s.set("horizontal_start", hs).set("horizontal_end", he).set("vertical_start", vs).set("vertical_end", ve);
}

// ---- conversions to the references' row-major logical arrays -----------------

inline reference::Field ref(const Field& f) {
  reference::Field r(f.rows, f.width());
  for (std::int64_t h = 0; h < f.rows; ++h)
    for (std::int64_t k = 0; k < f.width(); ++k) r(h, k) = f(h, k);
  return r;
}

inline std::vector<double> ref_vector(const Field& f) {
  std::vector<double> v(std::size_t(f.rows));
  for (std::int64_t h = 0; h < f.rows; ++h) v[std::size_t(h)] = f(h);
  return v;
}

inline void copy_back(const reference::Field& r, Field& f) {
  for (std::int64_t h = 0; h < f.rows; ++h)
    for (std::int64_t k = 0; k < f.width(); ++k) f(h, k) = r(h, k);
}

inline reference::Domain ref_domain(const Spec& settings) {
  const Box b = box_of(settings);
  return {b.hs, b.he, b.vs, b.ve};
}

// Runs `call` on reference copies of the named outputs and writes them back.
template <class Call>
inline void with_outputs(Arguments& a, std::initializer_list<const char*> names, Call&& call) {
  std::vector<reference::Field> outs;
  for (const char* name : names) outs.push_back(ref(a.field(name)));
  call(outs);
  std::size_t i = 0;
  for (const char* name : names) copy_back(outs[i++], a.field(name));
}

inline void add_table(Arguments& a, const Grid& g, Tbl t) {
  const granule::Connectivity& c = g.table(t);
  a.table(std::string(granule::name(t)), c.data, c.rows, c.cols);
}

// Where boundary row `row` of kind e starts on a limited-area grid; 0 on a torus.
inline std::int64_t row_start(const Grid& g, Entity e, int row) {
  return g.is_limited_area() ? g.boundary_row(e, row).start : 0;
}

inline StencilUnderTest turbulence_temporaries(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t nc = g.size(Entity::cell), ne = g.size(Entity::edge);
    Arguments a(layout);
    a.random("kh_smag_ec", ne, kLevels);
    a.random("vn", ne, kLevels);
    a.random("e_bln_c_s", nc, 3);
    a.random("geofac_div", nc, 3);
    a.profile("diff_multfac_smag", kLevels, 0.5, 1.5);  // a divisor
    a.filled("kh_c", nc, kLevels, poison());
    a.filled("div", nc, kLevels, poison());
    add_table(a, g, Tbl::C2E);
    return a;
  };
  auto run_reference = [&g = g](Arguments& a, const Spec& s) {
    with_outputs(a, {"kh_c", "div"}, [&](std::vector<reference::Field>& out) {
      reference::temporary_fields_for_turbulence_diagnostics(
          ref_domain(s), ref(a.field("kh_smag_ec")), ref(a.field("vn")), ref(a.field("e_bln_c_s")),
          ref(a.field("geofac_div")), ref_vector(a.field("diff_multfac_smag")), out[0], out[1], g.table(Tbl::C2E));
    });
  };
  return {"temporary_fields_for_turbulence_diagnostics", {"kh_c", "div"}, make, run_reference};
}

inline StencilUnderTest rbf_interpolation(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t nv = g.size(Entity::vertex);
    Arguments a(layout);
    a.random("p_e_in", g.size(Entity::edge), kLevels);
    a.random("ptr_coeff_1", nv, 6);
    a.random("ptr_coeff_2", nv, 6);
    a.filled("p_u_out", nv, kLevels, poison());
    a.filled("p_v_out", nv, kLevels, poison());
    add_table(a, g, Tbl::V2E);
    return a;
  };
  auto run_reference = [&g = g](Arguments& a, const Spec& s) {
    with_outputs(a, {"p_u_out", "p_v_out"}, [&](std::vector<reference::Field>& out) {
      reference::mo_intp_rbf_rbf_vec_interpol_vertex(ref_domain(s), ref(a.field("p_e_in")),
                                                     ref(a.field("ptr_coeff_1")), ref(a.field("ptr_coeff_2")), out[0],
                                                     out[1], g.table(Tbl::V2E));
    });
  };
  return {"mo_intp_rbf_rbf_vec_interpol_vertex", {"p_u_out", "p_v_out"}, make, run_reference};
}

inline StencilUnderTest vn_diffusion(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t ne = g.size(Entity::edge), nv = g.size(Entity::vertex);
    Arguments a(layout);
    a.random("u_vert", nv, kLevels);
    a.random("v_vert", nv, kLevels);
    a.random("primal_normal_vert_v1", ne, 4);
    a.random("primal_normal_vert_v2", ne, 4);
    a.random("z_nabla2_e", ne, kLevels);
    a.random("inv_vert_vert_length", ne, 0);
    a.random("inv_primal_edge_length", ne, 0);
    a.random("area_edge", ne, 0);
    a.random("kh_smag_e", ne, kLevels);
    a.profile("diff_multfac_vn", kLevels, -1.0, 1.0);
    a.random("nudgecoeff_e", ne, 0);
    a.random("vn", ne, kLevels);
    a.scalar("nudgezone_diff", 0.3);
    a.scalar("fac_bdydiff_v", -0.7);
    add_table(a, g, Tbl::E2C2V);
    return a;
  };
  auto run_reference = [&g = g](Arguments& a, const Spec& s) {
    with_outputs(a, {"vn"}, [&](std::vector<reference::Field>& out) {
      reference::apply_diffusion_to_vn(
          ref_domain(s), int_setting(s, "start_2nd_nudge_line_idx_e"), bool_setting(s, "limited_area"),
          ref(a.field("u_vert")), ref(a.field("v_vert")), ref(a.field("primal_normal_vert_v1")),
          ref(a.field("primal_normal_vert_v2")), ref(a.field("z_nabla2_e")),
          ref_vector(a.field("inv_vert_vert_length")), ref_vector(a.field("inv_primal_edge_length")),
          ref_vector(a.field("area_edge")), ref(a.field("kh_smag_e")), ref_vector(a.field("diff_multfac_vn")),
          ref_vector(a.field("nudgecoeff_e")), out[0], a.scalar("nudgezone_diff"), a.scalar("fac_bdydiff_v"),
          g.table(Tbl::E2C2V));
    });
  };
  return {"apply_diffusion_to_vn", {"vn"}, make, run_reference};
}

inline Spec vn_settings(Spec d, std::int64_t start_2nd_nudge_line, bool limited_area) {
  return d.set("start_2nd_nudge_line_idx_e", start_2nd_nudge_line).set("limited_area", limited_area);
}

inline StencilUnderTest w_diffusion(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t nc = g.size(Entity::cell);
    Arguments a(layout);
    a.random("area", nc, 0);
    a.random("geofac_n2s", nc, 4);
    a.random("geofac_grg_x", nc, 4);
    a.random("geofac_grg_y", nc, 4);
    a.random("w_old", nc, kLevels);
    a.filled("w", nc, kLevels, poison());
    a.filled("dwdx", nc, kLevels, poison());
    a.filled("dwdy", nc, kLevels, poison());
    a.scalar("diff_multfac_w", 0.6);
    a.profile("diff_multfac_n2w", kLevels, -1.0, 1.0);
    add_table(a, g, Tbl::C2E2CO);
    return a;
  };
  auto run_reference = [&g = g](Arguments& a, const Spec& s) {
    // The reference's scratch; kiln's kernel has it as a temporary.
    reference::Field z_nabla2_c(g.size(Entity::cell), kLevels, poison());
    with_outputs(a, {"w", "dwdx", "dwdy"}, [&](std::vector<reference::Field>& out) {
      reference::apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence(
          ref_domain(s), int(int_setting(s, "type_shear")), int_setting(s, "nrdmax"), int_setting(s, "interior_idx"),
          int_setting(s, "halo_idx"), ref_vector(a.field("area")), ref(a.field("geofac_n2s")),
          ref(a.field("geofac_grg_x")), ref(a.field("geofac_grg_y")), ref(a.field("w_old")), out[0], out[1], out[2],
          a.scalar("diff_multfac_w"), ref_vector(a.field("diff_multfac_n2w")), z_nabla2_c, g.table(Tbl::C2E2CO));
    });
  };
  return {"apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence", {"w", "dwdx", "dwdy"}, make,
          run_reference};
}

inline Spec w_settings(Spec d, int type_shear, std::int64_t nrdmax, std::int64_t interior_idx, std::int64_t halo_idx) {
  return d.set("type_shear", type_shear).set("nrdmax", nrdmax).set("interior_idx", interior_idx).set("halo_idx",
                                                                                                      halo_idx);
}

inline StencilUnderTest tridiagonal_solve(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t nc = g.size(Entity::cell);
    Arguments a(layout);
    a.random("vwind_impl_wgt", nc, 0);
    a.random("theta_v_ic", nc, kLevels);
    a.random("ddqz_z_half", nc, kLevels, 0.5, 1.5);  // a divisor
    a.random("z_alpha", nc, kLevels + 1);
    a.random("z_beta", nc, kLevels);
    a.random("z_w_expl", nc, kLevels + 1);
    a.random("z_exner_expl", nc, kLevels);
    a.filled("z_q", nc, kLevels, poison());
    a.filled("w", nc, kLevels, poison());
    // dtime * cpd = 0.1 keeps |g| <= 0.2: the matrix is diagonally dominant
    // and every pivot b + a * cq stays above 0.5.
    a.scalar("dtime", 0.2);
    a.scalar("cpd", 0.5);
    return a;
  };
  auto run_reference = [](Arguments& a, const Spec& s) {
    // The kernel starts at level 1 (it reads level k - 1); the reference requires it.
    reference::Domain d = ref_domain(s);
    d.vertical_start = std::max<std::int64_t>(d.vertical_start, 1);
    with_outputs(a, {"z_q", "w"}, [&](std::vector<reference::Field>& out) {
      reference::solve_tridiagonal_matrix_for_w(
          d, ref_vector(a.field("vwind_impl_wgt")), ref(a.field("theta_v_ic")), ref(a.field("ddqz_z_half")),
          ref(a.field("z_alpha")), ref(a.field("z_beta")), ref(a.field("z_w_expl")), ref(a.field("z_exner_expl")),
          out[0], out[1], a.scalar("dtime"), a.scalar("cpd"));
    });
  };
  return {"solve_tridiagonal_matrix_for_w", {"z_q", "w"}, make, run_reference};
}

inline StencilUnderTest half_level_interpolation(const Grid& g) {
  auto make = [&g = g](Layout layout) {
    const std::int64_t nc = g.size(Entity::cell);
    Arguments a(layout);
    a.random("wgtfac_c", nc, kLevels);
    a.random("interpolant", nc, kLevels);
    a.filled("interpolation_to_half_levels", nc, kLevels, poison());
    return a;
  };
  auto run_reference = [](Arguments& a, const Spec& s) {
    reference::Domain d = ref_domain(s);  // from level 1, as the kernel
    d.vertical_start = std::max<std::int64_t>(d.vertical_start, 1);
    with_outputs(a, {"interpolation_to_half_levels"}, [&](std::vector<reference::Field>& out) {
      reference::interpolate_cell_field_to_half_levels(d, ref(a.field("wgtfac_c")), ref(a.field("interpolant")),
                                                       out[0]);
    });
  };
  return {"interpolate_cell_field_to_half_levels", {"interpolation_to_half_levels"}, make, run_reference};
}

// ---- the settings each kernel is checked on ------------------------------------
// Domains avoid the -1 entries of tables the kernels read without checking
// (C2E2CO, E2C2V: ICON's kernels never run there either); V2E and the nabla2
// temporary of the w diffusion skip them, and the settings reach them.

// One choice of settings; a non-empty domain must change some output unless
// expect_change says the settings leave the kernel nothing to do.
struct StencilSetting {
  Spec settings;
  bool expect_change = true;
};

inline std::vector<StencilSetting> turbulence_settings(const Grid& g) {
  const std::int64_t nc = g.size(Entity::cell);
  const granule::IndexRange interior = g.interior(Entity::cell);
  return {{domain(0, nc, 0, kLevels)},  // every cell has its three edges
          {domain(g.nudging(Entity::cell).start, interior.end - 3, 2, kLevels - 1)},
          {domain(interior.start, interior.start, 0, kLevels)},
          {domain(0, nc, 4, 4)}};
}

inline std::vector<StencilSetting> rbf_settings(const Grid& g) {
  const std::int64_t nv = g.size(Entity::vertex);
  return {{domain(0, nv, 0, kLevels)},  // with the boundary's -1 entries
          {domain(row_start(g, Entity::vertex, 2), g.interior(Entity::vertex).start + 7, 1, 6)},
          {domain(nv - 5, nv, 2, kLevels - 1)},
          {domain(nv, nv, 0, kLevels)}};
}

inline std::vector<StencilSetting> vn_settings_of(const Grid& g) {
  const std::int64_t ne = g.size(Entity::edge);
  if (g.is_limited_area()) {
    // The boundary and first nudging rows take the boundary formula (their
    // E2C2V rows hold -1 and are never read); nabla4 from the second row on.
    const std::int64_t s2n = g.start_2nd_nudge_line(Entity::edge);
    return {{vn_settings(domain(0, ne, 0, kLevels), s2n, true)},
            {vn_settings(domain(g.nudging(Entity::edge).start, s2n, 1, kLevels - 1), s2n, true)},
            {vn_settings(domain(s2n, g.interior(Entity::edge).end, 0, kLevels), s2n, true)},
            {vn_settings(domain(s2n, s2n, 0, kLevels), s2n, true)}};
  }
  // Global runs nabla4 everywhere; a threshold inside the domain shows that
  // edges below it keep vn (global) or get the boundary formula (limited area).
  return {{vn_settings(domain(0, ne, 0, kLevels), 0, false)},
          {vn_settings(domain(10, ne - 7, 2, kLevels), 40, true)},
          {vn_settings(domain(10, ne - 7, 0, kLevels - 3), 40, false)},
          {vn_settings(domain(0, 40, 0, kLevels), 40, false), /*expect_change=*/false}};
}

inline std::vector<StencilSetting> w_settings_of(const Grid& g) {
  const std::int64_t nc = g.size(Entity::cell);
  if (g.is_limited_area()) {
    // From boundary row 2 on every cell has its neighbours; the nabla2
    // temporary also covers row 1 (skipping what lies outside the grid).
    const std::int64_t row2 = row_start(g, Entity::cell, 2);
    const granule::IndexRange nudging = g.nudging(Entity::cell), interior = g.interior(Entity::cell);
    return {{w_settings(domain(row2, nc, 0, kLevels), 2, 3, interior.start, nc)},
            {w_settings(domain(row2, interior.start + 5, 2, 7), 2, 4, row2, nudging.end)},
            {w_settings(domain(0, nc, 0, kLevels), 0, kLevels + 2, nudging.start, interior.end - 10)},
            {w_settings(domain(0, nc, 1, kLevels), 1, 3, nudging.start, nudging.start)},
            {w_settings(domain(nudging.start, nudging.start, 0, kLevels), 2, 3, 0, nc)},
            // Boundary row 0 in the domain, its missing neighbours (-1) in the
            // gradients and, diffused from cell 0 on, in nabla4: skipped, as icon4py does.
            {w_settings(domain(0, nc, 0, kLevels), 2, 3, nudging.start, interior.end - 10)},
            {w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc)}};
  }
  return {{w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc)},
          {w_settings(domain(5, nc - 6, 1, kLevels - 2), 1, 0, 20, 70)},
          {w_settings(domain(10, 60, 0, kLevels), 2, kLevels + 5, 0, 40)},
          {w_settings(domain(0, nc, 3, 3), 2, 3, 0, nc)}};
}

inline std::vector<StencilSetting> tridiagonal_settings(const Grid& g) {
  const std::int64_t nc = g.size(Entity::cell);
  return {{domain(0, nc, 1, kLevels)},
          {domain(g.nudging(Entity::cell).start, nc - 4, 3, kLevels - 2)},
          {domain(7, 30, 0, kLevels)},  // level 0 is left as it was
          {domain(7, 30, 5, 5)}};
}

inline std::vector<StencilSetting> half_level_settings(const Grid& g) {
  const std::int64_t nc = g.size(Entity::cell);
  return {{domain(0, nc, 1, kLevels)},
          {domain(g.interior(Entity::cell).start, nc - 1, 2, kLevels - 1)},
          {domain(0, 20, 0, kLevels)},  // level 0 is left as it was
          {domain(0, 0, 1, kLevels)}};
}

// Every kernel of the harness with its settings on `g` (which must outlive them).
struct StencilCase {
  StencilUnderTest stencil;
  std::vector<StencilSetting> settings;
};

inline std::vector<StencilCase> stencil_cases(const Grid& g) {
  return {{turbulence_temporaries(g), turbulence_settings(g)}, {rbf_interpolation(g), rbf_settings(g)},
          {vn_diffusion(g), vn_settings_of(g)},                {w_diffusion(g), w_settings_of(g)},
          {tridiagonal_solve(g), tridiagonal_settings(g)},     {half_level_interpolation(g), half_level_settings(g)}};
}

}  // namespace kiln::testing
