// The ICON kernels of kernels_src/ on granule grids (a torus and a
// limited-area grid cut into ICON's zones), against the independent
// references of tests/reference. For every setting, check_stencil
// (stencil_harness.hpp) runs three layouts (C order, Fortran order, ICON's
// blocks of 7) and checks specialised == generic bit for bit, both against
// the reference (rtol 3e-6), nothing outside the domain (nor the last block's
// padding) touched, and every layout == C order bit for bit. The kernels,
// their arguments, references and settings: stencil_cases.hpp.
#include "tests/api/stencil_cases.hpp"

namespace kiln::testing {
namespace {

// A torus, or a limited-area grid with every zone and an interior of 32 cells.
class Stencils : public ::testing::TestWithParam<bool> {
 protected:
  Grid grid = GetParam() ? Grid::limited_area(16, 16) : Grid::torus(8, 6);
  // One cache folder for the suite, in the build tree: ctest runs each test in
  // its own process, and they share compiled kernels through it (a hit and a
  // compile give the same binary, so no test's outcome depends on another).
  Runtime rt{config_for(KILN_STENCILS_CACHE_DIR)};
};

INSTANTIATE_TEST_SUITE_P(Grids, Stencils, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "LimitedArea" : "Torus"; });

// ---- temporary_fields_for_turbulence_diagnostics ------------------------------

TEST_P(Stencils, TemporaryFieldsForTurbulenceDiagnostics) {
  const StencilUnderTest s = turbulence_temporaries(grid);
  for (const StencilSetting& c : turbulence_settings(grid)) check_stencil(rt, s, c.settings, c.expect_change);
}

// ---- mo_intp_rbf_rbf_vec_interpol_vertex -------------------------------------

TEST_P(Stencils, RbfVecInterpolVertexSkipsMissingEdges) {
  const StencilUnderTest s = rbf_interpolation(grid);
  for (const StencilSetting& c : rbf_settings(grid)) check_stencil(rt, s, c.settings, c.expect_change);
}

// ---- apply_diffusion_to_vn ------------------------------------------------------

TEST_P(Stencils, ApplyDiffusionToVnOnEachSideOfTheSecondNudgingRow) {
  const StencilUnderTest s = vn_diffusion(grid);
  for (const StencilSetting& c : vn_settings_of(grid)) check_stencil(rt, s, c.settings, c.expect_change);
}

// ---- apply_diffusion_to_w_and_compute_horizontal_gradients_for_turbulence ------

TEST_P(Stencils, ApplyDiffusionToWAcrossZonesAndTheDampingLayer) {
  const StencilUnderTest s = w_diffusion(grid);
  for (const StencilSetting& c : w_settings_of(grid)) check_stencil(rt, s, c.settings, c.expect_change);
}

// ---- solve_tridiagonal_matrix_for_w -----------------------------------------------

TEST_P(Stencils, SolveTridiagonalMatrixForW) {
  const StencilUnderTest s = tridiagonal_solve(grid);
  for (const StencilSetting& c : tridiagonal_settings(grid)) check_stencil(rt, s, c.settings, c.expect_change);
}

// ---- interpolate_cell_field_to_half_levels --------------------------------------

TEST_P(Stencils, InterpolateCellFieldToHalfLevels) {
  const StencilUnderTest s = half_level_interpolation(grid);
  for (const StencilSetting& c : half_level_settings(grid)) check_stencil(rt, s, c.settings, c.expect_change);
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
