// Issue 19's table, through the C++ API: a domain outside the arrays, arrays
// that disagree on a size, a coefficient array narrower than the kernel reads.
// Every call is refused before the kernel runs (nothing is written, in the
// arrays or past them), with an ArgumentError naming the kernel, argument,
// dimension, range and extent; specialised and generic builds alike, on the
// call that compiled and on a later run's call from the cache.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

using Extents = RuntimeTest;

// What a view spans in bytes (for copies to device memory): from its element
// (0, ..., 0) to one past its last, whatever the order or padding.
TEST(ExtentBytes, IsTheSpanFromTheFirstElementToOnePastTheLast) {
  std::vector<double> d(64);
  std::vector<std::int32_t> i(64);
  EXPECT_EQ(extent_bytes(c_array(d.data(), {4, 3})), 12 * sizeof(double));
  EXPECT_EQ(extent_bytes(f_array(i.data(), {4, 3, 2})), 24 * sizeof(std::int32_t));
  // Rows of 3 in a row pitch of 5: the last row ends at element 3 * 5 + 3.
  const std::int64_t shape[] = {4, 3}, pitched[] = {5, 1};
  EXPECT_EQ(extent_bytes(kiln::array(d.data(), shape, pitched)), 18 * sizeof(double));
  const std::int64_t empty[] = {4, 0};
  EXPECT_EQ(extent_bytes(kiln::array(d.data(), empty, pitched)), 0u);
  EXPECT_EQ(extent_bytes(scalar(2.5)), 0u);
  const std::int64_t backwards[] = {-1, 4};
  EXPECT_THROW((void)extent_bytes(kiln::array(d.data(), shape, backwards)), ArgumentError);
}

struct Refusal {
  const char* what;
  int hs, he, vs, ve;
  const char* message;
};

// ThetaCase(16, 4): fields [16][4], area [16].
const Refusal kRefusals[] = {
    {"horizontal_end = n_cells + 2", 0, 18, 0, 4,
     "kernel 'update_theta_and_exner', domain range [horizontal_start, horizontal_end) = [0, 18) lies outside size "
     "cells = [0, 16) (argument 'theta_v' dimension 0, extent 16)"},
    {"vertical_end = n_levels + 3", 0, 16, 0, 7,
     "domain range [vertical_start, vertical_end) = [0, 7) lies outside size levels = [0, 4) (argument 'theta_v' "
     "dimension 1, extent 4)"},
    {"horizontal_end = 1e8", 0, 100000000, 0, 4, "[horizontal_start, horizontal_end) = [0, 100000000) lies outside"},
    {"horizontal_start = -3", -3, 16, 0, 4, "[horizontal_start, horizontal_end) = [-3, 16) lies outside"},
    {"vertical_start = -2", 0, 16, -2, 4, "[vertical_start, vertical_end) = [-2, 4) lies outside"},
};

void expect_refused(const Kernel& k, ThetaCase& c, const Refusal& r) {
  const ThetaCase before = c;
  const std::string what = message_of<ArgumentError>([&] { c.run(k); });
  EXPECT_NE(what.find(r.message), std::string::npos) << r.what << ": " << what;
  EXPECT_EQ(c.theta_v, before.theta_v) << r.what;  // refused before any work
  EXPECT_EQ(c.exner, before.exner) << r.what;
}

TEST_F(Extents, DomainsOutsideTheArraysAreRefusedSpecialisedAndGeneric) {
  for (const Refusal& r : kRefusals)
    for (Mode mode : {Mode::specialised, Mode::generic}) {
      ThetaCase c(16, 4, false);
      expect_refused(rt.kernel("update_theta_and_exner", c.spec(r.hs, r.he, r.vs, r.ve), mode), c, r);
    }
}

// "Once the kernel was cached, exit 0 with 25 wrong points": a second run
// loads the entry the first stored, and its entry refuses the call as well.
TEST_F(Extents, AKernelFromTheCacheRefusesAsTheOneThatCompiled) {
  const Refusal& r = kRefusals[3];
  ThetaCase c(16, 4, false);
  expect_refused(rt.kernel("update_theta_and_exner", c.spec(r.hs, r.he, r.vs, r.ve)), c, r);
  Runtime later{config_for(dir.path())};
  expect_refused(later.kernel("update_theta_and_exner", c.spec(r.hs, r.he, r.vs, r.ve)), c, r);
  EXPECT_EQ(later.metrics().total().compiles, 0u);
  EXPECT_EQ(later.metrics().total().disk_hits, 1u);
}

TEST_F(Extents, EmptyRangesAndTheWholeArrayAreAccepted) {
  ThetaCase c(16, 4, false);
  ThetaCase expected = c;
  rt.kernel("update_theta_and_exner", c.spec(0, 16, 0, 4)).operator()(c.view(c.theta_v), c.view(c.exner),
                                                                          c.area_view(), c.view(c.z_temp));
  expected.reference(0, 16, 0, 4);
  EXPECT_EQ(c.theta_v, expected.theta_v);
  // start >= end is an empty range, wherever it lies: ICON passes such ones.
  ThetaCase empty(16, 4, false);
  const ThetaCase before = empty;
  empty.run(rt.kernel("update_theta_and_exner", empty.spec(40, -5, 0, 4)));
  EXPECT_EQ(empty.theta_v, before.theta_v);
}

TEST_F(Extents, ArraysThatDisagreeOnASizeAreRefused) {
  ThetaCase c(16, 4, false);
  const Kernel k = rt.kernel("update_theta_and_exner", c.spec(0, 8, 0, 4));
  const ThetaCase before = c;
  std::vector<double> short_area(15, 1e-3);
  std::string what = message_of<ArgumentError>(
      [&] { k(c.view(c.theta_v), c.view(c.exner), c_array(short_area.data(), {15}), c.view(c.z_temp)); });
  EXPECT_NE(what.find("kernel 'update_theta_and_exner', argument 'area' dimension 0 (cells): extent 15, but "
                      "argument 'theta_v' dimension 0 has 16 for cells: the arrays sharing a size must agree on it"),
            std::string::npos)
      << what;
  // Generic: strides specialised for 4 levels would refuse z_temp's before its extent.
  const Kernel generic = rt.kernel("update_theta_and_exner", c.spec(0, 8, 0, 4), Mode::generic);
  std::vector<double> fewer_levels(16 * 3, 0.5);
  what = message_of<ArgumentError>(
      [&] { generic(c.view(c.theta_v), c.view(c.exner), c.area_view(), c_array(fewer_levels.data(), {16, 3})); });
  EXPECT_NE(what.find("argument 'z_temp' dimension 1 (levels): extent 3, but argument 'theta_v' dimension 1 has 4"),
            std::string::npos)
      << what;
  EXPECT_EQ(c.theta_v, before.theta_v);
}

// A coefficient array of 2 columns where the kernel reads 3 (C2E's width).
TEST_F(Extents, ACoefficientArrayNarrowerThanTheKernelReadsIsRefused) {
  constexpr int cells = 4, edges = 6, levels = 3;
  std::vector<double> kh_smag_ec(edges * levels, 1.0), vn(edges * levels, 2.0), geofac_div(cells * 3, 0.5);
  std::vector<double> narrow(cells * 2, 0.25), multfac(levels, 1.0), kh_c(cells * levels, 0.0), div(cells * levels, 0.0);
  std::vector<std::int32_t> c2e = {0, 1, 2, 1, 2, 3, 2, 3, 4, 3, 4, 5};
  Spec spec;
  spec.set("horizontal_start", 0).set("horizontal_end", cells).set("vertical_start", 0).set("vertical_end", levels);
  const Kernel k = rt.kernel("temporary_fields_for_turbulence_diagnostics", spec);
  const std::string what = message_of<ArgumentError>([&] {
    k(c_array(kh_smag_ec.data(), {edges, levels}), c_array(vn.data(), {edges, levels}),
      c_array(narrow.data(), {cells, 2}), c_array(geofac_div.data(), {cells, 3}), c_array(multfac.data(), {levels}),
      c_array(kh_c.data(), {cells, levels}), c_array(div.data(), {cells, levels}), c_array(c2e.data(), {cells, 3}));
  });
  EXPECT_NE(what.find("kernel 'temporary_fields_for_turbulence_diagnostics', argument 'e_bln_c_s' dimension 1: "
                      "extent 2, declared 3"),
            std::string::npos)
      << what;
  EXPECT_EQ(kh_c, std::vector<double>(cells * levels, 0.0));
  EXPECT_EQ(div, std::vector<double>(cells * levels, 0.0));
}

// A missing neighbour is read as row 0 of the field and dropped (the prelude's
// present_or_zero), so a table with entries must index a size that has a row:
// edges = 0 under a C2E of 4 rows is refused, not read.
TEST_F(Extents, ATableIndexingAnEmptySizeIsRefused) {
  constexpr int cells = 4, levels = 3;
  std::vector<double> geofac_div(cells * 3, 0.5), e_bln(cells * 3, 0.25), multfac(levels, 1.0);
  std::vector<double> kh_c(cells * levels, 0.0), div(cells * levels, 0.0), no_edges(1, 7.0);
  std::vector<std::int32_t> c2e(cells * 3, -1);
  Spec spec;
  spec.set("horizontal_start", 0).set("horizontal_end", cells).set("vertical_start", 0).set("vertical_end", levels);
  for (Mode mode : {Mode::specialised, Mode::generic}) {
    const Kernel k = rt.kernel("temporary_fields_for_turbulence_diagnostics", spec, mode);
    const std::string what = message_of<ArgumentError>([&] {
      k(c_array(no_edges.data(), {0, levels}), c_array(no_edges.data(), {0, levels}),
        c_array(e_bln.data(), {cells, 3}), c_array(geofac_div.data(), {cells, 3}), c_array(multfac.data(), {levels}),
        c_array(kh_c.data(), {cells, levels}), c_array(div.data(), {cells, levels}), c_array(c2e.data(), {cells, 3}));
    });
    EXPECT_NE(what.find("kernel 'temporary_fields_for_turbulence_diagnostics', argument 'C2E' indexes edges, which "
                        "is empty (argument 'kh_smag_ec' dimension 0, extent 0)"),
              std::string::npos)
        << what;
    EXPECT_EQ(kh_c, std::vector<double>(cells * levels, 0.0));
    EXPECT_EQ(div, std::vector<double>(cells * levels, 0.0));
  }
}

}  // namespace
}  // namespace kiln::testing
