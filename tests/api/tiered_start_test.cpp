// Tiered start (Config::tiered, docs/manual/tiered-start.md; issue 34, item 4):
// a miss returns the generic build at once and the specialised build, built
// on the Runtime's thread, replaces it at a call boundary. The tests hold the
// specialised key's build lock (as another process compiling it would) to
// keep that build from finishing until they let go: nothing here depends on
// timing.
#include <atomic>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "cache/build_lock.hpp"
#include "kiln/kiln.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// out = a * x + z over [start, end): each call computes the same, so every
// call's result can be compared, bit for bit, with the first one's.
constexpr const char* kAxpz = R"(#pragma kiln kernel tiered_axpz
#pragma kiln array double out[n]
#pragma kiln array double x[n]
#pragma kiln array double z[n]
#pragma kiln domain start end
#pragma kiln static double a
#pragma kiln size n contains start end
for (kiln::index_t i = start; i < end; ++i) out(i) = a * x(i) + z(i);
)";

// The same, but its specialised build refuses end == 7 at compile time (a
// static_assert on the specialised value); the generic build, where `end` is
// no constant, compiles.
constexpr const char* kRefusesSeven = R"(#pragma kiln kernel tiered_refuses_seven
#pragma kiln array double out[n]
#pragma kiln array double x[n]
#pragma kiln array double z[n]
#pragma kiln domain start end
#pragma kiln static double a
#pragma kiln size n contains start end
static_assert(!__builtin_constant_p(end) || end != 7, "tiered test: a specialised end of 7 is refused");
for (kiln::index_t i = start; i < end; ++i) out(i) = a * x(i) + z(i);
)";

// And one whose generic build does not compile: its text needs `end` as a constant.
constexpr const char* kOnlySpecialised = R"(#pragma kiln kernel tiered_only_specialised
#pragma kiln array double out[n]
#pragma kiln array double x[n]
#pragma kiln array double z[n]
#pragma kiln domain start end
#pragma kiln static double a
#pragma kiln size n contains start end
static_assert(__builtin_constant_p(end), "tiered test: compiles only specialised");
for (kiln::index_t i = start; i < end; ++i) out(i) = a * x(i) + z(i);
)";

constexpr int kPoints = 64;

Spec spec_of(int end) { return Spec().set("start", 0).set("end", end).set("a", 1.0 / 3.0); }

struct Fields {
  std::vector<double> out = std::vector<double>(kPoints, 0.0), x = random_field(kPoints, -2, 2, 5),
                      z = random_field(kPoints, -1, 1, 6);
  void run(const Kernel& k) {
    k(c_array(out.data(), {kPoints}), c_array(x.data(), {kPoints}), c_array(z.data(), {kPoints}));
  }
};

class TieredStartTest : public ::testing::Test {
 protected:
  Config tiered_config(bool timed) {
    Config config = config_for(dir.path());
    config.tiered = true;
    config.time_calls = timed;
    return config;
  }
  // The specialised build's lock, held as another process compiling it would hold it.
  static cache::BuildLock hold_build_lock(Runtime& rt, const std::string& name, const Spec& spec) {
    const std::string key = rt.generated_source(name, spec).key;
    cache::BuildLock lock =
        cache::BuildLock::acquire(rt.config().cache_dir / key.substr(0, 2) / (key.substr(2) + ".lock"),
                                  std::chrono::milliseconds(0));
    EXPECT_TRUE(lock.held()) << lock.problem();
    return lock;
  }
  // Calls run by each build, from the timed calls' metrics.
  static std::uint64_t calls_of(const MetricsSnapshot& m, const std::string& row) {
    const auto kernel = m.kernels.find(row);
    if (kernel == m.kernels.end()) return 0;
    std::uint64_t calls = 0;
    for (const char* phase : {"first_call", "run"})
      if (const auto p = kernel->second.phases.find(phase); p != kernel->second.phases.end()) calls += p->second.count;
    return calls;
  }

  TempDir dir;
};

TEST_F(TieredStartTest, TheGenericBuildServesAtOnceThenTheSpecialisedOneWithTheSameBits) {
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  std::optional<cache::BuildLock> lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints));
  const Kernel k = rt.kernel("tiered_axpz", spec_of(kPoints));
  Fields generic;
  for (int i = 0; i < 3; ++i) generic.run(k);
  MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(calls_of(m, "tiered_axpz (generic)"), 3U);
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 0U);
  EXPECT_EQ(m.kernels["tiered_axpz (generic)"].compiles, 1U);

  lock.reset();  // the specialised build may go on now
  rt.wait_for_specialised();
  Fields specialised;
  for (int i = 0; i < 2; ++i) specialised.run(k);
  m = rt.metrics();
  EXPECT_EQ(calls_of(m, "tiered_axpz (generic)"), 3U);
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 2U);
  EXPECT_EQ(m.kernels["tiered_axpz"].compiles, 1U);
  EXPECT_EQ(std::memcmp(generic.out.data(), specialised.out.data(), sizeof(double) * kPoints), 0);
  // Looked up again: the same handle, now on the specialised build.
  Fields again;
  again.run(rt.kernel("tiered_axpz", spec_of(kPoints)));
  EXPECT_EQ(calls_of(rt.metrics(), "tiered_axpz"), 3U);
  EXPECT_EQ(std::memcmp(generic.out.data(), again.out.data(), sizeof(double) * kPoints), 0);
}

TEST_F(TieredStartTest, AWarmCacheGivesTheSpecialisedBuildAtOnceAndOneGenericBuildServesEverySpecialisation) {
  {
    Runtime rt(tiered_config(true));
    rt.register_kernel(kAxpz, "tiered_axpz.kiln");
    rt.kernel("tiered_axpz", spec_of(kPoints));
    rt.kernel("tiered_axpz", spec_of(kPoints / 2));
    rt.wait_for_specialised();
    const MetricsSnapshot m = rt.metrics();
    EXPECT_EQ(m.kernels.at("tiered_axpz (generic)").compiles, 1U) << "one generic build for both";
    EXPECT_EQ(m.kernels.at("tiered_axpz").compiles, 2U);
  }
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  Fields f;
  f.run(rt.kernel("tiered_axpz", spec_of(kPoints)));
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(m.kernels.count("tiered_axpz (generic)"), 0U) << "the specialised build was in the cache";
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 1U);
  EXPECT_EQ(m.kernels.at("tiered_axpz").disk_hits, 1U);
}

TEST_F(TieredStartTest, CallsFromFourThreadsWhileTheBuildsSwapAllComputeTheSameBits) {
  Runtime rt(tiered_config(false));  // untimed: the calls take the inline path
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  std::optional<cache::BuildLock> lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints));
  const Kernel k = rt.kernel("tiered_axpz", spec_of(kPoints));
  Fields reference;
  reference.run(k);  // on the generic build: the lock holds the specialised one back

  constexpr int kThreads = 4, kCallsAfter = 200;
  std::atomic<bool> swapped{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      Fields mine;
      // Until the swap, then kCallsAfter more: every call checked.
      for (int after = 0; after < kCallsAfter; after += swapped.load() ? 1 : 0) {
        std::fill(mine.out.begin(), mine.out.end(), 0.0);
        mine.run(k);
        if (std::memcmp(mine.out.data(), reference.out.data(), sizeof(double) * kPoints) != 0) ++wrong;
      }
    });
  }
  lock.reset();
  rt.wait_for_specialised();
  swapped = true;
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST_F(TieredStartTest, ASpecialisedBuildThatFailsLeavesTheGenericBuildAndIsReportedOnce) {
  Config config = tiered_config(true);
  config.log_level = "warn";
  Runtime rt(config);
  rt.register_kernel(kRefusesSeven, "tiered_refuses_seven.kiln");
  ::testing::internal::CaptureStderr();
  rt.kernel("tiered_refuses_seven", spec_of(7));  // queues the specialised build, which fails
  rt.wait_for_specialised();
  Fields f;
  for (int i = 0; i < 3; ++i) f.run(rt.kernel("tiered_refuses_seven", spec_of(7)));
  rt.wait_for_specialised();
  const std::string log = ::testing::internal::GetCapturedStderr();
  const std::string said = "kernel 'tiered_refuses_seven': its specialised build failed, its calls stay on the generic build";
  ASSERT_NE(log.find(said), std::string::npos) << log;
  EXPECT_EQ(log.find(said, log.find(said) + 1), std::string::npos) << "reported once: " << log;
  EXPECT_NE(log.find("a specialised end of 7 is refused"), std::string::npos) << log;
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(calls_of(m, "tiered_refuses_seven (generic)"), 3U);
  EXPECT_EQ(calls_of(m, "tiered_refuses_seven"), 0U);
  EXPECT_EQ(m.kernels.at("tiered_refuses_seven").compiles, 0U);
  for (int i = 0; i < 7; ++i) EXPECT_NEAR(f.out[i], 1.0 / 3.0 * f.x[i] + f.z[i], 1e-15) << i;  // fused or not
  EXPECT_EQ(f.out[7], 0.0) << "outside [start, end)";
}

TEST_F(TieredStartTest, AGenericBuildThatDoesNotCompileLeavesTheSpecialisedBuildToTheCall) {
  Runtime rt(tiered_config(true));
  rt.register_kernel(kOnlySpecialised, "tiered_only_specialised.kiln");
  Fields f;
  for (int i = 0; i < 2; ++i) f.run(rt.kernel("tiered_only_specialised", spec_of(kPoints)));
  rt.wait_for_specialised();
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(calls_of(m, "tiered_only_specialised"), 2U);
  EXPECT_EQ(calls_of(m, "tiered_only_specialised (generic)"), 0U);
  EXPECT_EQ(m.kernels.at("tiered_only_specialised").compiles, 1U);
  EXPECT_EQ(m.kernels.at("tiered_only_specialised (generic)").compiles, 0U);
  for (int i = 0; i < kPoints; ++i) EXPECT_NEAR(f.out[i], 1.0 / 3.0 * f.x[i] + f.z[i], 1e-15) << i;
}

TEST_F(TieredStartTest, ARuntimeEndedWhileItsBuildWaitsEndsWithoutHarm) {
  Config config = tiered_config(false);
  config.lock_timeout = std::chrono::milliseconds(300);  // the queued build stops waiting then, and compiles
  std::optional<cache::BuildLock> lock;
  Fields f;
  {
    Runtime rt(config);
    rt.register_kernel(kAxpz, "tiered_axpz.kiln");
    lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints));
    for (int end = kPoints; end > kPoints - 4; --end) rt.kernel("tiered_axpz", spec_of(end));  // queued
    f.run(rt.kernel("tiered_axpz", spec_of(kPoints)));
  }  // ends with one build waiting for the lock or compiling, the others dropped
  lock.reset();
  // What the cache holds is whole: a new Runtime loads or builds every one of them.
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  Fields g;
  g.run(rt.kernel("tiered_axpz", spec_of(kPoints)));
  EXPECT_EQ(std::memcmp(f.out.data(), g.out.data(), sizeof(double) * kPoints), 0);
  for (int end = kPoints - 1; end > kPoints - 4; --end) EXPECT_TRUE(rt.kernel("tiered_axpz", spec_of(end)));
}

// Runtime::kernels() (a batch): each specialised miss gets the generic build
// at once, one generic build for every specialisation of a kernel, and a
// repeated request and a generic request share it; the specialised builds
// then replace it, computing the same bits.
TEST_F(TieredStartTest, ABatchGetsGenericBuildsAtOnceThenTheSpecialisedOnesWithTheSameBits) {
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  std::optional<cache::BuildLock> lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints));
  const std::vector<KernelRequest> requests = {{"tiered_axpz", spec_of(kPoints)},
                                               {"tiered_axpz", spec_of(kPoints / 2)},
                                               {"tiered_axpz", spec_of(kPoints)},
                                               {"tiered_axpz", spec_of(kPoints), Mode::generic}};
  const std::vector<Kernel> k = rt.kernels(requests);
  Fields before[4];
  for (int i = 0; i < 4; ++i) before[i].run(k[i]);
  MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(m.kernels["tiered_axpz (generic)"].compiles, 1U) << "one generic build for all four";
  EXPECT_EQ(m.kernels["tiered_axpz"].compiles, 0U) << "the first queued build waits for the lock";
  EXPECT_EQ(calls_of(m, "tiered_axpz (generic)"), 4U);
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 0U);

  lock.reset();
  rt.wait_for_specialised();
  Fields after[4];
  for (int i = 0; i < 4; ++i) after[i].run(k[i]);
  m = rt.metrics();
  EXPECT_EQ(m.kernels["tiered_axpz"].compiles, 2U) << "the repeated request's build is queued once";
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 3U);
  EXPECT_EQ(calls_of(m, "tiered_axpz (generic)"), 5U) << "the generic request stays generic";
  for (int i = 0; i < 4; ++i)
    EXPECT_EQ(std::memcmp(before[i].out.data(), after[i].out.data(), sizeof(double) * kPoints), 0) << i;
  EXPECT_EQ(std::memcmp(after[0].out.data(), after[3].out.data(), sizeof(double) * kPoints), 0);
}

// Warm: a batch whose specialised builds are in the cache gets them, no
// generic build; a kernel whose generic build does not compile gets its
// specialised build in the batch; and nothing queued means nothing to wait for.
TEST_F(TieredStartTest, ABatchTakesCachedSpecialisedBuildsAndLeavesAGenericBuildThatFailsToTheSpecialisedOne) {
  const std::vector<KernelRequest> requests = {{"tiered_axpz", spec_of(kPoints)},
                                               {"tiered_only_specialised", spec_of(kPoints)}};
  {
    Runtime rt(config_for(dir.path()));
    rt.register_kernel(kAxpz, "tiered_axpz.kiln");
    rt.kernel("tiered_axpz", spec_of(kPoints));
  }
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  rt.register_kernel(kOnlySpecialised, "tiered_only_specialised.kiln");
  const std::vector<Kernel> k = rt.kernels(requests);
  rt.wait_for_specialised();
  Fields f[2];
  for (int i = 0; i < 2; ++i) f[i].run(k[i]);
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(m.kernels.count("tiered_axpz (generic)"), 0U);
  EXPECT_EQ(m.kernels.at("tiered_axpz").disk_hits, 1U);
  EXPECT_EQ(calls_of(m, "tiered_axpz"), 1U);
  EXPECT_EQ(m.kernels.at("tiered_only_specialised").compiles, 1U);
  EXPECT_EQ(m.kernels.at("tiered_only_specialised (generic)").compiles, 0U);
  EXPECT_EQ(calls_of(m, "tiered_only_specialised"), 1U);
  EXPECT_EQ(std::memcmp(f[0].out.data(), f[1].out.data(), sizeof(double) * kPoints), 0);
}

// precompile() compiles what it is asked for, tiered or not: nothing stands in, nothing is queued.
TEST_F(TieredStartTest, PrecompileIsNotTiered) {
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  rt.precompile("tiered_axpz", spec_of(kPoints));
  rt.wait_for_specialised();
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(m.kernels.count("tiered_axpz (generic)"), 0U);
  EXPECT_EQ(m.kernels.at("tiered_axpz").compiles, 1U);
}

// The opt levels of the generic builds a cache holds, from their recipes.
std::vector<std::string> generic_levels(const fs::path& dir) {
  std::vector<std::string> levels;
  const Cache cache(dir);
  for (const CacheRecord& record : cache.records())
    if (record.kernel == "tiered_axpz (generic)") levels.push_back(cache.read(record.key)->recipe->opt_level);
  return levels;
}

// The stand-in is compiled for a short compile (Config::tiered_opt_level, O1
// by default): its own entry, whose recipe says so, and the same bits as the
// specialised -O3 build (the first test compares them; here at O2 too).
TEST_F(TieredStartTest, TheStandInIsCompiledAtTheTieredLevelAndComputesTheSameBits) {
  for (const char* level : {"O1", "O2"}) {
    TempDir cache;
    Config config = config_for(cache.path());
    config.tiered = true;
    config.tiered_opt_level = level;
    Runtime rt(config);
    rt.register_kernel(kAxpz, "tiered_axpz.kiln");
    std::optional<cache::BuildLock> lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints));
    const Kernel k = rt.kernel("tiered_axpz", spec_of(kPoints));
    Fields generic;
    generic.run(k);
    lock.reset();
    rt.wait_for_specialised();
    Fields specialised;
    specialised.run(k);
    EXPECT_EQ(std::memcmp(generic.out.data(), specialised.out.data(), sizeof(double) * kPoints), 0) << level;
    EXPECT_EQ(generic_levels(cache.path()), std::vector<std::string>{level});
  }
}

// A generic build at Config::opt_level in the cache (a generic request
// before, kiln warm) stands in as it is: nothing compiled for the stand-in.
TEST_F(TieredStartTest, AGenericBuildAtTheConfigsLevelInTheCacheStandsInWithoutACompile) {
  {
    Runtime rt(config_for(dir.path()));
    rt.register_kernel(kAxpz, "tiered_axpz.kiln");
    rt.kernel("tiered_axpz", spec_of(kPoints), Mode::generic);
  }
  Runtime rt(tiered_config(true));
  rt.register_kernel(kAxpz, "tiered_axpz.kiln");
  std::optional<cache::BuildLock> lock = hold_build_lock(rt, "tiered_axpz", spec_of(kPoints / 2));
  Fields f;
  f.run(rt.kernel("tiered_axpz", spec_of(kPoints / 2)));
  const MetricsSnapshot m = rt.metrics();
  EXPECT_EQ(m.kernels.at("tiered_axpz (generic)").compiles, 0U);
  EXPECT_EQ(m.kernels.at("tiered_axpz (generic)").disk_hits, 1U);
  EXPECT_EQ(calls_of(m, "tiered_axpz (generic)"), 1U);
  EXPECT_EQ(generic_levels(dir.path()), std::vector<std::string>{"O3"});
  lock.reset();
}

TEST(TieredConfigTest, KilnTieredSetsIt) {
  ::setenv("KILN_TIERED", "1", 1);
  EXPECT_TRUE(Config::from_env().tiered);
  ::unsetenv("KILN_TIERED");
  EXPECT_FALSE(Config::from_env().tiered);
}

TEST(TieredConfigTest, TheTieredOptLevelIsReadAndABadOneRefusedByName) {
  EXPECT_EQ(Config::from_env().tiered_opt_level, "O1");
  ::setenv("KILN_TIERED_OPT_LEVEL", "O2", 1);
  EXPECT_EQ(Config::from_env().tiered_opt_level, "O2");
  ::setenv("KILN_TIERED_OPT_LEVEL", "O9", 1);
  EXPECT_NE(message_of<Error>([] { Config::from_env(); }).find("KILN_TIERED_OPT_LEVEL='O9': expected O0, O1"),
            std::string::npos);
  ::unsetenv("KILN_TIERED_OPT_LEVEL");
  TempDir dir;
  Config config = config_for(dir.path());
  config.tiered_opt_level = "-O1";
  EXPECT_NE(message_of<Error>([&] { Runtime rt(config); }).find("Config::tiered_opt_level '-O1': expected one of O0"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::testing
