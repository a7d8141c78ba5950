// The ICON kernels of kernels_src/ on granule grids (a torus and a
// limited-area grid cut into ICON's zones), against the independent
// references of tests/reference. For every setting, check_stencil
// (stencil_harness.hpp) runs three layouts (C order, Fortran order, ICON's
// blocks of 7) and checks specialised == generic bit for bit, both against
// the reference (rtol 3e-6), nothing outside the domain (nor the last block's
// padding) touched, and every layout == C order bit for bit.
//
// Domains avoid the -1 entries of tables the kernels read without checking
// (C2E2CO, E2C2V: ICON's kernels never run there either); V2E and the nabla2
// temporary of the w diffusion skip them, and the settings reach them.
#include "granule/grid.hpp"
#include "tests/api/stencil_harness.hpp"
#include "tests/reference/stencil_references.hpp"

namespace kiln::testing {
namespace {

using granule::Entity;
using granule::Grid;
using Tbl = granule::Table;

constexpr std::int64_t kLevels = 9;  // odd: vector loops get a remainder

Spec domain(std::int64_t hs, std::int64_t he, std::int64_t vs, std::int64_t ve) {
  Spec s;
  return s.set("horizontal_start", hs).set("horizontal_end", he).set("vertical_start", vs).set("vertical_end", ve);
}

// ---- conversions to the references' row-major logical arrays -----------------

reference::Field ref(const Field& f) {
  reference::Field r(f.rows, f.width());
  for (std::int64_t h = 0; h < f.rows; ++h)
    for (std::int64_t k = 0; k < f.width(); ++k) r(h, k) = f(h, k);
  return r;
}

std::vector<double> ref_vector(const Field& f) {
  std::vector<double> v(std::size_t(f.rows));
  for (std::int64_t h = 0; h < f.rows; ++h) v[std::size_t(h)] = f(h);
  return v;
}

void copy_back(const reference::Field& r, Field& f) {
  for (std::int64_t h = 0; h < f.rows; ++h)
    for (std::int64_t k = 0; k < f.width(); ++k) f(h, k) = r(h, k);
}

reference::Domain ref_domain(const Spec& settings) {
  const Box b = box_of(settings);
  return {b.hs, b.he, b.vs, b.ve};
}

// Runs `call` on reference copies of the named outputs and writes them back.
template <class Call>
void with_outputs(Arguments& a, std::initializer_list<const char*> names, Call&& call) {
  std::vector<reference::Field> outs;
  for (const char* name : names) outs.push_back(ref(a.field(name)));
  call(outs);
  std::size_t i = 0;
  for (const char* name : names) copy_back(outs[i++], a.field(name));
}

void add_table(Arguments& a, const Grid& g, Tbl t) {
  const granule::Connectivity& c = g.table(t);
  a.table(std::string(granule::name(t)), c.data, c.rows, c.cols);
}

// Where boundary row `row` of kind e starts on a limited-area grid; 0 on a torus.
std::int64_t row_start(const Grid& g, Entity e, int row) {
  return g.is_limited_area() ? g.boundary_row(e, row).start : 0;
}

// A torus, or a limited-area grid with every zone and an interior of 32 cells.
class Stencils : public ::testing::TestWithParam<bool> {
 protected:
  Grid grid = GetParam() ? Grid::limited_area(16, 16) : Grid::torus(8, 6);
  // One cache folder for the suite, in the build tree: ctest runs each test in
  // its own process, and they share compiled kernels through it (a hit and a
  // compile give the same binary, so no test's outcome depends on another).
  Runtime rt{config_for(KILN_STENCILS_CACHE_DIR)};
  bool lam() const { return grid.is_limited_area(); }
  std::int64_t n(Entity e) const { return grid.size(e); }
};

INSTANTIATE_TEST_SUITE_P(Grids, Stencils, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "LimitedArea" : "Torus"; });

// ---- temporary_fields_for_turbulence_diagnostics ------------------------------

StencilUnderTest turbulence_temporaries(const Grid& g) {
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

TEST_P(Stencils, TemporaryFieldsForTurbulenceDiagnostics) {
  const StencilUnderTest s = turbulence_temporaries(grid);
  const std::int64_t nc = n(Entity::cell);
  const granule::IndexRange interior = grid.interior(Entity::cell);
  check_stencil(rt, s, domain(0, nc, 0, kLevels));  // every cell has its three edges
  check_stencil(rt, s, domain(grid.nudging(Entity::cell).start, interior.end - 3, 2, kLevels - 1));
  check_stencil(rt, s, domain(interior.start, interior.start, 0, kLevels));
  check_stencil(rt, s, domain(0, nc, 4, 4));
}

// ---- mo_intp_rbf_rbf_vec_interpol_vertex -------------------------------------

StencilUnderTest rbf_interpolation(const Grid& g) {
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

TEST_P(Stencils, RbfVecInterpolVertexSkipsMissingEdges) {
  const StencilUnderTest s = rbf_interpolation(grid);
  const std::int64_t nv = n(Entity::vertex);
  check_stencil(rt, s, domain(0, nv, 0, kLevels));  // with the boundary's -1 entries
  check_stencil(rt, s, domain(row_start(grid, Entity::vertex, 2), grid.interior(Entity::vertex).start + 7, 1, 6));
  check_stencil(rt, s, domain(nv - 5, nv, 2, kLevels - 1));
  check_stencil(rt, s, domain(nv, nv, 0, kLevels));
}

// ---- apply_diffusion_to_vn ------------------------------------------------------

StencilUnderTest vn_diffusion(const Grid& g) {
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

Spec vn_settings(Spec d, std::int64_t start_2nd_nudge_line, bool limited_area) {
  return d.set("start_2nd_nudge_line_idx_e", start_2nd_nudge_line).set("limited_area", limited_area);
}

TEST_P(Stencils, ApplyDiffusionToVnOnEachSideOfTheSecondNudgingRow) {
  const StencilUnderTest s = vn_diffusion(grid);
  const std::int64_t ne = n(Entity::edge);
  if (lam()) {
    // The boundary and first nudging rows take the boundary formula (their
    // E2C2V rows hold -1 and are never read); nabla4 from the second row on.
    const std::int64_t s2n = grid.start_2nd_nudge_line(Entity::edge);
    check_stencil(rt, s, vn_settings(domain(0, ne, 0, kLevels), s2n, true));
    check_stencil(rt, s, vn_settings(domain(grid.nudging(Entity::edge).start, s2n, 1, kLevels - 1), s2n, true));
    check_stencil(rt, s, vn_settings(domain(s2n, grid.interior(Entity::edge).end, 0, kLevels), s2n, true));
    check_stencil(rt, s, vn_settings(domain(s2n, s2n, 0, kLevels), s2n, true));
  } else {
    // Global runs nabla4 everywhere; a threshold inside the domain shows that
    // edges below it keep vn (global) or get the boundary formula (limited area).
    check_stencil(rt, s, vn_settings(domain(0, ne, 0, kLevels), 0, false));
    check_stencil(rt, s, vn_settings(domain(10, ne - 7, 2, kLevels), 40, true));
    check_stencil(rt, s, vn_settings(domain(10, ne - 7, 0, kLevels - 3), 40, false));
    check_stencil(rt, s, vn_settings(domain(0, 40, 0, kLevels), 40, false), /*expect_change=*/false);
  }
}

// ---- apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence ------

StencilUnderTest w_diffusion(const Grid& g) {
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

Spec w_settings(Spec d, int type_shear, std::int64_t nrdmax, std::int64_t interior_idx, std::int64_t halo_idx) {
  return d.set("type_shear", type_shear).set("nrdmax", nrdmax).set("interior_idx", interior_idx).set("halo_idx",
                                                                                                      halo_idx);
}

TEST_P(Stencils, ApplyDiffusionToWAcrossZonesAndTheDampingLayer) {
  const StencilUnderTest s = w_diffusion(grid);
  const std::int64_t nc = n(Entity::cell);
  if (lam()) {
    // From boundary row 2 on every cell has its neighbours; the nabla2
    // temporary also covers row 1 (skipping what lies outside the grid).
    const std::int64_t row2 = row_start(grid, Entity::cell, 2);
    const granule::IndexRange nudging = grid.nudging(Entity::cell), interior = grid.interior(Entity::cell);
    check_stencil(rt, s, w_settings(domain(row2, nc, 0, kLevels), 2, 3, interior.start, nc));
    check_stencil(rt, s, w_settings(domain(row2, interior.start + 5, 2, 7), 2, 4, row2, nudging.end));
    check_stencil(rt, s, w_settings(domain(0, nc, 0, kLevels), 0, kLevels + 2, nudging.start, interior.end - 10));
    check_stencil(rt, s, w_settings(domain(0, nc, 1, kLevels), 1, 3, nudging.start, nudging.start));
    check_stencil(rt, s, w_settings(domain(nudging.start, nudging.start, 0, kLevels), 2, 3, 0, nc));
    // Boundary row 0 in the domain, its missing neighbours (-1) in the
    // gradients and, diffused from cell 0 on, in nabla4: skipped, as icon4py does.
    check_stencil(rt, s, w_settings(domain(0, nc, 0, kLevels), 2, 3, nudging.start, interior.end - 10));
    check_stencil(rt, s, w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc));
  } else {
    check_stencil(rt, s, w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc));
    check_stencil(rt, s, w_settings(domain(5, nc - 6, 1, kLevels - 2), 1, 0, 20, 70));
    check_stencil(rt, s, w_settings(domain(10, 60, 0, kLevels), 2, kLevels + 5, 0, 40));
    check_stencil(rt, s, w_settings(domain(0, nc, 3, 3), 2, 3, 0, nc));
  }
}

// ---- solve_tridiagonal_matrix_for_w -----------------------------------------------

StencilUnderTest tridiagonal_solve(const Grid& g) {
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

TEST_P(Stencils, SolveTridiagonalMatrixForW) {
  const StencilUnderTest s = tridiagonal_solve(grid);
  const std::int64_t nc = n(Entity::cell);
  check_stencil(rt, s, domain(0, nc, 1, kLevels));
  check_stencil(rt, s, domain(grid.nudging(Entity::cell).start, nc - 4, 3, kLevels - 2));
  check_stencil(rt, s, domain(7, 30, 0, kLevels));  // level 0 is left as it was
  check_stencil(rt, s, domain(7, 30, 5, 5));
}

// ---- interpolate_cell_field_to_half_levels --------------------------------------

StencilUnderTest half_level_interpolation(const Grid& g) {
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

TEST_P(Stencils, InterpolateCellFieldToHalfLevels) {
  const StencilUnderTest s = half_level_interpolation(grid);
  const std::int64_t nc = n(Entity::cell);
  check_stencil(rt, s, domain(0, nc, 1, kLevels));
  check_stencil(rt, s, domain(grid.interior(Entity::cell).start, nc - 1, 2, kLevels - 1));
  check_stencil(rt, s, domain(0, 20, 0, kLevels));  // level 0 is left as it was
  check_stencil(rt, s, domain(0, 0, 1, kLevels));
}

// ---- any table content: nothing written outside the arrays ----------------------
// Issue 33, item 2: without check mode, a table entry at or past the size it
// indexes made the w diffusion's nabla2 (over neighbour_hull of the diffused
// cells) write past the end of kiln's temporary z_nabla2_c (valgrind: invalid
// writes, then SIGSEGV). Here every table of every granule kernel that has
// one gets an out-of-range entry in each row: at and past its size (C order
// and blocks of 7) and below -1 (C order: a blocked view's division takes no
// negative index). Reads out of range of the caller's arrays stay what the
// kernel language documents (check mode catches them); writes go only to the
// domain's points of the outputs and into kiln's own temporaries' memory.
// tests/api/bad_tables_valgrind.sh runs this under valgrind and fails on any
// invalid write (the kernels are JIT'd without ASan, which cannot see them):
// without the clamp (lang/prelude/22_temporaries.hpp), 8 invalid writes past
// the end of z_nabla2_c on the torus.
struct BadTableCase {
  StencilUnderTest stencil;
  std::string table;
  std::int64_t indexed;  // the size the table's entries index
  Spec settings;
};

std::vector<BadTableCase> bad_table_cases(const Grid& g) {
  const std::int64_t nc = g.size(Entity::cell), ne = g.size(Entity::edge), nv = g.size(Entity::vertex);
  return {{turbulence_temporaries(g), "C2E", ne, domain(0, nc, 0, kLevels)},
          {rbf_interpolation(g), "V2E", ne, domain(0, nv, 0, kLevels)},
          {vn_diffusion(g), "E2C2V", nv, vn_settings(domain(0, ne, 0, kLevels), 0, false)},
          {w_diffusion(g), "C2E2CO", nc, w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc)}};
}

// Row r's column r % cols holds bad[r % bad.size()].
void spoil(const IndexArray& table, const std::vector<std::int64_t>& bad) {
  IndexArray& t = const_cast<IndexArray&>(table);  // the kernel reads it through a view either way
  for (std::int64_t r = 0; r < t.rows; ++r) t(r, r % t.cols) = std::int32_t(bad[std::size_t(r) % bad.size()]);
}

TEST_P(Stencils, OutOfRangeTableEntriesWriteNothingOutsideTheArrays) {
  // x86-64-v2 (SSE4.2): code valgrind can run (it has no AVX-512), the same
  // loops and memory accesses as a native build.
  Config config = config_for(KILN_STENCILS_CACHE_DIR);
  config.target_cpu = "x86-64-v2";
  Runtime v2(config);
  for (const BadTableCase& c : bad_table_cases(grid))
    for (const Layout& layout : {Layout::c(), Layout::blocked(7)}) {
      SCOPED_TRACE(c.stencil.kernel + ", " + layout.name());
      const Arguments before = c.stencil.make(layout);
      Arguments spoiled = before;
      std::vector<std::int64_t> bad = {c.indexed, c.indexed + 1, c.indexed + 3};
      if (layout.order == Layout::Order::c) bad.insert(bad.end(), {-2, -3});
      spoil(spoiled.table(c.table), bad);
      const Arguments given = spoiled;
      spoiled.run(v2.kernel(c.stencil.kernel, spoiled.spec(c.settings)), 1);
      const Box box = box_of(c.settings);
      for (const std::string& out : c.stencil.outputs) {
        const Field &after = spoiled.field(out), &was = given.field(out);
        for (std::int64_t h = 0; h < after.rows; ++h)
          for (std::int64_t k = 0; k < after.width(); ++k)
            if (!box.contains(h, k)) {
              ASSERT_TRUE(same_bits(after(h, k), was(h, k))) << out << " at " << h << ", " << k;
            }
        EXPECT_TRUE(after.same_padding(was)) << out;
      }
    }
}

}  // namespace
}  // namespace kiln::testing
