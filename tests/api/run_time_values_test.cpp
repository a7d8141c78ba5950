// Specialisation per parameter (Spec::run_time): a specialised build with
// some values read at run time. One binary then serves every value of those,
// the cache key holds only what is compiled in, and results are those of the
// all-constant and the generic builds.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

constexpr int kCells = 40, kLevels = 6;
const char* kName = "update_theta_and_exner";

// ICON's choice: the levels and the flags compiled in, the horizontal bounds read at run time.
Spec icon_choice(ThetaCase& theta, int hs, int he, double rd_o_cvd = 0.3) {
  return theta.spec(hs, he, 0, kLevels, rd_o_cvd).run_time("horizontal_start").run_time("horizontal_end");
}

// Four threads' chunks of one domain: one compile, where all-constant specs
// would make four, and every chunk computes its own part.
TEST_F(RuntimeTest, RunTimeBoundsShareOneBinaryAcrossChunks) {
  ThetaCase theta(kCells, kLevels, true), want = theta;
  std::string key;
  for (int chunk = 0; chunk < 4; ++chunk) {
    const Kernel k = rt.kernel(kName, icon_choice(theta, chunk * 10, chunk * 10 + 10));
    if (chunk == 0) key = k.key();
    EXPECT_EQ(k.key(), key) << "chunk " << chunk;
    theta.run(k);
  }
  want.reference(0, kCells, 0, kLevels, 0.3);
  EXPECT_EQ(theta.theta_v, want.theta_v);
  expect_close(theta.exner, want.exner);
  EXPECT_EQ(rt.metrics().total().compiles, 1u);
  // A compiled-in value that changes is another binary; so is the all-constant spec.
  EXPECT_NE(rt.kernel(kName, icon_choice(theta, 0, 10, 0.4)).key(), key);
  EXPECT_NE(rt.kernel(kName, theta.spec(0, 10, 0, kLevels, 0.3)).key(), key);
  EXPECT_EQ(rt.metrics().total().compiles, 3u);
}

// The three ways compute the same: all constant, ICON's choice, generic.
TEST_F(RuntimeTest, RunTimeValuesComputeWhatConstantsDo) {
  ThetaCase all(kCells, kLevels, false), mixed = all, generic = all;
  all.run(rt.kernel(kName, all.spec(3, 37, 1, 5, 0.3)));
  Spec s = mixed.spec(3, 37, 1, 5, 0.3);
  mixed.run(rt.kernel(kName, s.run_time("horizontal_start").run_time("horizontal_end").run_time("rd_o_cvd")));
  generic.run(rt.kernel(kName, generic.spec(3, 37, 1, 5, 0.3), Mode::generic));
  EXPECT_EQ(mixed.theta_v, all.theta_v);
  EXPECT_EQ(mixed.exner, all.exner);
  EXPECT_EQ(generic.exner, all.exner);
}

TEST(RunTimeValues, OnlyParametersThatAreSetCanBeRunTime) {
  Spec s;
  EXPECT_NE(message_of<SpecError>([&] { s.run_time("horizontal_end"); }).find("set its value first"),
            std::string::npos);
  s.strides("theta_v", {1, 40});
  EXPECT_NE(message_of<SpecError>([&] { s.run_time("theta_v"); }).find("strides or blocks"), std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
