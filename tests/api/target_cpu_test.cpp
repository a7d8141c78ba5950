// Config::target_cpu: kernels compiled for an x86-64 level instead of this
// host. The key then holds the level, not the host's model and stepping, so a
// cache warmed on one machine serves another of the level; a host that lacks
// a feature of the level loads none of its kernels (an error, never SIGILL).
// Other hosts are played by this one with features hidden from glibc
// (GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX512F), in child processes.
#include "tests/api/test_child_run.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// The test child on `cache`'s folder, with `env` added.
ChildRun run_child(const TempDir& cache, std::map<std::string, std::string> env) {
  env["KILN_CACHE_DIR"] = cache.path() / "cache";
  return run_test_child(cache.path(), env);
}

const std::map<std::string, std::string> kNoAvx512 = {{"GLIBC_TUNABLES", "glibc.cpu.hwcaps=-AVX512F"}};

std::map<std::string, std::string> with(std::map<std::string, std::string> env, const char* target) {
  env["KILN_TARGET_CPU"] = target;
  return env;
}

TEST(TargetCpu, ALevelsKeyHoldsTheLevelNotTheHost) {
  TempDir dir;
  const ChildRun first = run_child(dir, with({}, "x86-64-v3"));
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.compiles, 2u);
  // "Another host": the same CPU with AVX-512 hidden. Its identity differs,
  // the level's key does not: it loads what the first compiled.
  const ChildRun other = run_child(dir, with(kNoAvx512, "x86-64-v3"));
  ASSERT_TRUE(other.ok) << other.error;
  EXPECT_EQ(other.compiles, 0u);
  EXPECT_EQ(other.disk_hits, 2u);
  EXPECT_EQ(other.checksum, first.checksum);
  if (!__builtin_cpu_supports("avx512f")) GTEST_SKIP() << "no AVX-512 here to hide: native keys cannot differ";
  ASSERT_TRUE(run_child(dir, with({}, "native")).ok);
  const ChildRun native_other = run_child(dir, with(kNoAvx512, "native"));
  EXPECT_EQ(native_other.compiles, 2u) << "native keys hold the host's features";
}

// A CPU LLVM knows, by name: its features (taken from LLVM when kiln was
// built) are checked as a level's are, and its key is as portable.
TEST(TargetCpu, ANamedCpuIsCheckedAndKeyedAsALevelIs) {
  TempDir dir;
  const ChildRun refused = run_child(dir, with(kNoAvx512, "skylake-avx512"));
  EXPECT_FALSE(refused.ok);
  EXPECT_NE(refused.error.find("kernels are compiled for skylake-avx512"), std::string::npos) << refused.error;
  EXPECT_NE(refused.error.find("avx512f"), std::string::npos) << refused.error;
  const ChildRun first = run_child(dir, with({}, "nehalem"));
  ASSERT_TRUE(first.ok) << first.error;
  EXPECT_EQ(first.compiles, 2u);
  const ChildRun other = run_child(dir, with(kNoAvx512, "nehalem"));
  ASSERT_TRUE(other.ok) << other.error;
  EXPECT_EQ(other.compiles, 0u);
  EXPECT_EQ(other.checksum, first.checksum);
}

TEST(TargetCpu, AHostLackingALevelsFeatureLoadsNoneOfItsKernels) {
  TempDir dir;
  const ChildRun run = run_child(dir, with(kNoAvx512, "x86-64-v4"));
  EXPECT_FALSE(run.ok);
  EXPECT_NE(run.error.find("kernels are compiled for x86-64-v4"), std::string::npos) << run.error;
  EXPECT_NE(run.error.find("this CPU lacks AVX512F"), std::string::npos) << run.error;
  EXPECT_EQ(run.compiles, 0u);
}

// A level this host runs: the same results as native, under another key;
// precompile() fills the cache without loading, and kernel() then finds it.
TEST(TargetCpu, PrecompileFillsTheCacheAndKernelFindsIt) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.target_cpu = "x86-64-v2";
  ThetaCase theta(40, 6, true), native = theta;
  std::string key;
  {
    Runtime rt(config);
    key = rt.precompile("update_theta_and_exner", theta.spec(1, 39, 0, 6));
    EXPECT_EQ(rt.metrics().total().compiles, 1u);
  }
  Runtime rt(config);
  const Kernel k = rt.kernel("update_theta_and_exner", theta.spec(1, 39, 0, 6));
  EXPECT_EQ(k.key(), key);
  EXPECT_EQ(rt.metrics().total().compiles, 0u);
  theta.run(k);
  Runtime host(config_for(dir.path()));
  const Kernel n = host.kernel("update_theta_and_exner", native.spec(1, 39, 0, 6));
  EXPECT_NE(n.key(), key);
  native.run(n);
  EXPECT_EQ(theta.theta_v, native.theta_v);
  EXPECT_EQ(theta.exner, native.exner);
}

TEST(TargetCpu, NamesThatAreNoTargetAreRefused) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.target_cpu = "znver99";
  EXPECT_NE(message_of<Error>([&] { Runtime rt(config); }).find("Config::target_cpu 'znver99': expected native, an "
                                                                "x86-64 level"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
