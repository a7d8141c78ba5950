// The granule end to end through kiln: a few steps of the whole kernel
// sequence on small grids. Specialised and generic runs agree bit for bit,
// the values stay finite, and the two layouts give the same values.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace kiln::granule {
namespace {

constexpr std::int64_t kLevels = 7;
constexpr int kSteps = 3;

// One cache folder for the suite: each kernel compiles once per specialisation.
class GranuleRun : public ::testing::TestWithParam<bool> {
 protected:
  static void SetUpTestSuite() {
    std::string pattern = (std::filesystem::temp_directory_path() / "kiln-granule-test-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    cache_dir_ = new std::filesystem::path(pattern);
  }
  static void TearDownTestSuite() {
    std::error_code ignored;
    std::filesystem::remove_all(*cache_dir_, ignored);
    delete cache_dir_;
  }
  static Config config() {
    Config c;
    c.cache_dir = *cache_dir_;
    c.log_level = "error";
    return c;
  }
  static Grid grid() { return GetParam() ? Grid::limited_area(14, 13) : Grid::torus(6, 5); }

  static std::filesystem::path* cache_dir_;
};
std::filesystem::path* GranuleRun::cache_dir_ = nullptr;

TEST_P(GranuleRun, SpecialisedEqualsGenericAfterSeveralSteps) {
  const Grid g = grid();
  Runtime rt(config());
  Granule specialised(g, kLevels, Layout::c), generic(g, kLevels, Layout::c), untouched(g, kLevels, Layout::c);
  for (int step = 0; step < kSteps; ++step) {
    specialised.step(rt, Mode::specialised);
    generic.step(rt, Mode::generic);
  }
  EXPECT_TRUE(specialised.finite());
  EXPECT_EQ(Granule::max_difference(specialised, generic), 0.0);
  EXPECT_GT(Granule::max_difference(specialised, untouched), 0.0);  // the steps did change the fields
  // Seven kernels, each resolved once per mode, then found in memory on every later step.
  const KernelMetrics total = rt.metrics().total();
  EXPECT_EQ(total.compiles + total.disk_hits, 14u);
  EXPECT_EQ(total.memory_hits, 14u * (kSteps - 1));
}

TEST_P(GranuleRun, BothLayoutsGiveTheSameValues) {
  const Grid g = grid();
  Runtime rt(config());
  Granule c_order(g, kLevels, Layout::c), fortran(g, kLevels, Layout::fortran);
  for (int step = 0; step < kSteps; ++step) {
    c_order.step(rt, Mode::specialised);
    fortran.step(rt, Mode::specialised);
  }
  for (const auto& [name, a] : c_order.fields()) {
    const Field& b = fortran.fields().at(name);
    for (std::int64_t r = 0; r < a.rows(); ++r)
      for (std::int64_t c = 0; c < a.cols(); ++c)
        ASSERT_EQ(a(r, c), b(r, c)) << name << " at " << r << "," << c;
  }
}

INSTANTIATE_TEST_SUITE_P(Grids, GranuleRun, ::testing::Values(false, true),
                         [](const auto& info) { return info.param ? "LimitedArea" : "Torus"; });

}  // namespace
}  // namespace kiln::granule
