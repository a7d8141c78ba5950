// How kernels are compiled (Config::opt_level, Config::fp_contract): each
// setting is in the cache key, and multiply-add contraction "off" rounds
// every operation as written, for bitwise agreement with code compiled ahead
// of time with -ffp-contract=off.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

const char* kMultiplyAdd = R"(#pragma kiln kernel multiply_add
#pragma kiln array double a[1]
#pragma kiln array double b[1]
#pragma kiln array double c[1]
#pragma kiln array double y[1]
#pragma kiln domain n
kiln::for_each_column(0, n, [&](kiln::index_t i) { y(i) = a(i) * b(i) + c(i); });
)";

// a*b = 1 + 2^-29 + 2^-60: rounded it loses 2^-60, and a*b + c is 0; fused, 2^-60.
constexpr double kA = 1.0 + 0x1p-30, kC = -(1.0 + 0x1p-29);

double multiply_add(const std::filesystem::path& cache, const std::string& fp_contract,
                    const std::string& opt_level = "O3", std::uint64_t* compiles = nullptr) {
  Config config = config_for(cache);
  config.fp_contract = fp_contract;
  config.opt_level = opt_level;
  Runtime rt(config);
  rt.register_kernel(kMultiplyAdd, "multiply_add.kiln");
  std::vector<double> a(4, kA), b(4, kA), c(4, kC), y(4, -1.0);
  rt.kernel("multiply_add", Spec().set("n", 4))(c_array(a.data(), {4}), c_array(b.data(), {4}),
                                                 c_array(c.data(), {4}), c_array(y.data(), {4}));
  for (double v : y) EXPECT_EQ(v, y[0]);
  if (compiles) *compiles = rt.metrics().total().compiles;
  return y[0];
}

bool host_fuses() { return __builtin_cpu_supports("fma"); }

TEST(CompileOptions, ContractionOffRoundsEveryOperationAsWritten) {
  TempDir dir;
  volatile double product = kA * kA;  // rounded on its own, as -ffp-contract=off code does
  const double unfused = product + kC;
  ASSERT_EQ(unfused, 0.0);
  EXPECT_EQ(multiply_add(dir.path(), "off"), unfused);
  if (!host_fuses()) GTEST_SKIP() << "this CPU has no fused multiply-add: on and fast round as off does";
  EXPECT_EQ(multiply_add(dir.path(), "on"), 0x1p-60);
  EXPECT_EQ(multiply_add(dir.path(), "fast"), 0x1p-60);
}

// Each setting is its own binary: a cache that holds one misses the others.
TEST(CompileOptions, EachSettingIsInTheKey) {
  TempDir dir;
  std::uint64_t compiles = 0;
  for (const auto& [contract, level] : {std::pair{"on", "O3"}, {"off", "O3"}, {"on", "O1"}, {"fast", "O0"}}) {
    multiply_add(dir.path(), contract, level, &compiles);
    EXPECT_EQ(compiles, 1u) << contract << " " << level << ": a new setting compiles";
    multiply_add(dir.path(), contract, level, &compiles);
    EXPECT_EQ(compiles, 0u) << contract << " " << level << ": the same setting is found on disk";
  }
}

TEST(CompileOptions, SettingsConfigCannotHaveAreNamedWhenTheRuntimeIsMade) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.opt_level = "-O3";
  EXPECT_NE(message_of<Error>([&] { Runtime rt(config); }).find("Config::opt_level '-O3': expected one of O0, O1"),
            std::string::npos);
  config = config_for(dir.path());
  config.fp_contract = "sometimes";
  EXPECT_NE(message_of<Error>([&] { Runtime rt(config); }).find("Config::fp_contract 'sometimes'"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
