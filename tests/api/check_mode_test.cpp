// Check mode (Config::check, KILN_CHECK): issue 19's table rows that no
// per-call check can see, a connectivity table's contents. A table entry out
// of range, a -1 where the table may hold none, and a -1 the kernel reads as
// if present each stop the kernel before the access, and the call throws an
// ArgumentError naming the kernel, array, index and point. On good input
// check mode computes what the normal build computes, under its own key.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

class CheckMode : public ::testing::Test {
 protected:
  static Config checked(const std::filesystem::path& dir) {
    Config config = config_for(dir);
    config.check = true;
    return config;
  }
  TempDir dir;
  Runtime rt{checked(dir.path())};
  Runtime normal{config_for(dir.path())};
};

Spec domain(int horizontal, int levels) {
  Spec spec;
  return spec.set("horizontal_start", 0).set("horizontal_end", horizontal).set("vertical_start", 0).set(
      "vertical_end", levels);
}

// temporary_fields_for_turbulence_diagnostics on 4 cells, 6 edges, 3 levels.
struct TurbulenceCase {
  static constexpr int cells = 4, edges = 6, levels = 3;
  std::vector<double> kh_smag_ec = random_field(edges * levels, 0, 1, 3), vn = random_field(edges * levels, -1, 1, 4);
  std::vector<double> e_bln_c_s = random_field(cells * 3, 0, 1, 5), geofac_div = random_field(cells * 3, -1, 1, 6);
  std::vector<double> multfac = std::vector<double>(levels, 2.0);
  std::vector<double> kh_c = std::vector<double>(cells * levels, 0.0), div = std::vector<double>(cells * levels, 0.0);
  std::vector<std::int32_t> c2e = {0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5};

  void run(const Kernel& k) {
    k(c_array(kh_smag_ec.data(), {edges, levels}), c_array(vn.data(), {edges, levels}),
      c_array(e_bln_c_s.data(), {cells, 3}), c_array(geofac_div.data(), {cells, 3}), c_array(multfac.data(), {levels}),
      c_array(kh_c.data(), {cells, levels}), c_array(div.data(), {cells, levels}), c_array(c2e.data(), {cells, 3}));
  }
};

const char* kTurbulence = "temporary_fields_for_turbulence_diagnostics";

TEST_F(CheckMode, GoodInputGivesTheNormalBuildsResultsUnderAnotherKey) {
  TurbulenceCase checked_case, normal_case;
  const Kernel k = rt.kernel(kTurbulence, domain(4, 3));
  const Kernel plain = normal.kernel(kTurbulence, domain(4, 3));
  EXPECT_NE(k.key(), plain.key());
  checked_case.run(k);
  normal_case.run(plain);
  EXPECT_EQ(checked_case.div, normal_case.div);
  EXPECT_EQ(checked_case.kh_c, normal_case.kh_c);
  EXPECT_NE(checked_case.div, std::vector<double>(12, 0.0));
}

TEST_F(CheckMode, ATableEntryOutOfRangeStopsTheKernelNamingIt) {
  TurbulenceCase c;
  c.c2e[2 * 3 + 1] = 99;  // cell 2's second edge: there are 6
  const std::string what = message_of<ArgumentError>([&] { c.run(rt.kernel(kTurbulence, domain(4, 3))); });
  EXPECT_NE(what.find("kernel 'temporary_fields_for_turbulence_diagnostics', check mode: table 'C2E' at (2, 1) "
                      "holds 99, outside edges (the size it indexes), at point (2, 0)"),
            std::string::npos)
      << what;
  // It stopped at cell 2: cells 0 and 1 were computed, cells 2 and 3 not.
  EXPECT_NE(c.div[0], 0.0);
  EXPECT_EQ(c.div[2 * 3 + 0], 0.0);
  EXPECT_EQ(c.div[3 * 3 + 2], 0.0);
  // Generic builds check alike.
  TurbulenceCase g;
  g.c2e[5] = -7;
  const std::string generic =
      message_of<ArgumentError>([&] { g.run(rt.kernel(kTurbulence, domain(4, 3), Mode::generic)); });
  EXPECT_NE(generic.find("table 'C2E' at (1, 2) holds -7, outside edges"), std::string::npos) << generic;
}

TEST_F(CheckMode, AMissingNeighbourWhereTheTableMayHoldNoneIsNamed) {
  TurbulenceCase c;
  c.c2e[3 * 3 + 0] = -1;  // C2E: every cell has its three edges
  const std::string what = message_of<ArgumentError>([&] { c.run(rt.kernel(kTurbulence, domain(4, 3))); });
  EXPECT_NE(what.find("table 'C2E' at (3, 0) holds -1: a missing neighbour (-1), which 'C2E' may not hold "
                      "(declared 'indexes edges'), at point (3, 0)"),
            std::string::npos)
      << what;
}

// apply_diffusion_to_vn on 4 edges, 5 vertices, 2 levels, global grid: an
// inner edge's E2C2V row with -1, read as a vertex (icon4py's boundary rows
// may hold -1; the inner ones, where this kernel reads vertices, may not).
TEST_F(CheckMode, AMissingNeighbourReadAsIfPresentIsNamedNotRead) {
  constexpr int edges = 4, vertices = 5, levels = 2;
  auto field = [](int n, unsigned seed) { return random_field(std::size_t(n), 0.5, 1.5, seed); };
  std::vector<double> u = field(vertices * levels, 1), v = field(vertices * levels, 2), v1 = field(edges * 4, 3),
                      v2 = field(edges * 4, 4), z2 = field(edges * levels, 5), ivv = field(edges, 6),
                      ipe = field(edges, 7), area = field(edges, 8), kh = field(edges * levels, 9),
                      mf = field(levels, 10), nudge = field(edges, 11), vn = field(edges * levels, 12);
  std::vector<std::int32_t> e2c2v = {0, 1, 2, 3, 1, 2, 3, 4, 2, 3, -1, 0, 3, 4, 0, 1};
  Spec spec = domain(edges, levels);
  spec.set("start_2nd_nudge_line_idx_e", 0).set("limited_area", false);
  const Kernel k = rt.kernel("apply_diffusion_to_vn", spec);
  const std::string what = message_of<ArgumentError>([&] {
    k(c_array(u.data(), {vertices, levels}), c_array(v.data(), {vertices, levels}), c_array(v1.data(), {edges, 4}),
      c_array(v2.data(), {edges, 4}), c_array(z2.data(), {edges, levels}), c_array(ivv.data(), {edges}),
      c_array(ipe.data(), {edges}), c_array(area.data(), {edges}), c_array(kh.data(), {edges, levels}),
      c_array(mf.data(), {levels}), c_array(nudge.data(), {edges}), c_array(vn.data(), {edges, levels}), 0.1, 0.2,
      c_array(e2c2v.data(), {edges, 4}));
  });
  // The table and its column too (issue 33, item 3): E2C2V row 2 holds -1 in column 2.
  EXPECT_NE(what.find("kernel 'apply_diffusion_to_vn', check mode: array 'u_vert' read at (-1, 0), outside its "
                      "extents (5, 2) (index -1: a missing neighbour read as if present; the last -1 it read: "
                      "table 'E2C2V', row 2, column 2), at point (2, 0)"),
            std::string::npos)
      << what;
}

TEST_F(CheckMode, ExtentsAreStillCheckedBeforeTheKernelRuns) {
  TurbulenceCase c;
  const std::string what = message_of<ArgumentError>([&] { c.run(rt.kernel(kTurbulence, domain(5, 3))); });
  EXPECT_NE(what.find("[horizontal_start, horizontal_end) = [0, 5) lies outside size cells = [0, 4)"),
            std::string::npos)
      << what;
}

}  // namespace
}  // namespace kiln::testing
