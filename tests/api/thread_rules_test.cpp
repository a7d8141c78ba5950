// Which calls split among threads (docs/manual/threads.md, issue 33): threads
// never change a result. A kernel whose body loops by hand, or writes an
// array outside the prelude's phase helpers, runs on one thread whatever the
// thread count (every thread would otherwise run the whole body: a sum of
// 3.83 came out 60.06 with OMP_NUM_THREADS=2); the configured threads
// (Config::threads, KILN_THREADS, OMP_NUM_THREADS) are given by work, one per
// kPointsPerThread points; run_on(n) asks for n; no call asks for more than 1024.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// A sum over the domain by hand: no kiln::for_each_*.
const char* kPlainLoop = R"(#pragma kiln kernel plain_loop_sum
#pragma kiln array double x[n]
#pragma kiln array double total[1]
#pragma kiln domain start end
#pragma kiln size n contains start end
for (kiln::index_t i = start; i < end; ++i) total(0) += x(i) * x(i);
)";

// A phase, then a plain loop that writes outside it: a race if it split.
const char* kMixed = R"(#pragma kiln kernel mixed_phase_and_loop
#pragma kiln array double x[n]
#pragma kiln array double y[n]
#pragma kiln array double total[1]
#pragma kiln domain start end
#pragma kiln size n contains start end
kiln::for_each_column(start, end, [&](kiln::index_t c) { y(c) = 2.0 * x(c); });
for (kiln::index_t i = start; i < end; ++i) total(0) += y(i);
)";

// Phases only, the writes in a named lambda used inside them: splits.
const char* kPhases = R"(#pragma kiln kernel phases_only
#pragma kiln array double x[n]
#pragma kiln array double y[n]
#pragma kiln domain start end
#pragma kiln size n contains start end
auto twice = [&](kiln::index_t c) { y(c) = 2.0 * x(c); };
kiln::for_each_column(start, end, twice);
)";

constexpr int kPoints = 50000;  // > 3 * kPointsPerThread (16384): the work rule allows 3 threads

Config timed(const std::filesystem::path& dir, int threads = 0) {
  Config config = config_for(dir);
  config.time_calls = true;
  config.threads = threads;
  return config;
}

Spec range(int start, int end) {
  Spec spec;
  return spec.set("start", start).set("end", end);
}

struct SumCase {
  std::vector<double> x = random_field(kPoints, 0.1, 1.0, 5), y = std::vector<double>(kPoints, 0.0);
  std::vector<double> total{3.83};
  kiln_arg xs() { return c_array(x.data(), {kPoints}); }
  kiln_arg ys() { return c_array(y.data(), {kPoints}); }
  kiln_arg sum() { return c_array(total.data(), {1}); }
};

TEST(ThreadRules, APlainLoopRunsOnOneThreadWhateverTheThreadCount) {
  TempDir dir;
  Runtime rt(timed(dir.path()));
  rt.register_kernel(kPlainLoop, "plain_loop_sum.kiln");
  const Kernel k = rt.kernel("plain_loop_sum", range(0, kPoints));
  SumCase one;
  k.run_on(1, one.xs(), one.sum());
  EXPECT_NE(one.total[0], 3.83);
  for (int threads : {2, 3, 7}) {
    SumCase many;
    k.run_on(threads, many.xs(), many.sum());
    EXPECT_EQ(many.total[0], one.total[0]) << threads << " threads";
  }
  EXPECT_EQ(rt.metrics().kernels.at("plain_loop_sum").threads, 1);
  // The configured threads alike (OMP_NUM_THREADS=2 was the report's case).
  Runtime seven(timed(dir.path(), 7));
  seven.register_kernel(kPlainLoop, "plain_loop_sum.kiln");
  SumCase configured;
  seven.kernel("plain_loop_sum", range(0, kPoints))(configured.xs(), configured.sum());
  EXPECT_EQ(configured.total[0], one.total[0]);
  EXPECT_EQ(seven.metrics().kernels.at("plain_loop_sum").threads, 1);
}

TEST(ThreadRules, APhaseBesideAPlainLoopThatWritesRunsOnOneThread) {
  TempDir dir;
  Runtime rt(timed(dir.path()));
  rt.register_kernel(kMixed, "mixed.kiln");
  const Kernel k = rt.kernel("mixed_phase_and_loop", range(0, kPoints));
  SumCase one;
  k.run_on(1, one.xs(), one.ys(), one.sum());
  for (int threads : {2, 3, 7}) {
    SumCase many;
    k.run_on(threads, many.xs(), many.ys(), many.sum());
    EXPECT_EQ(many.total[0], one.total[0]) << threads << " threads";
    EXPECT_EQ(many.y, one.y) << threads << " threads";
  }
  EXPECT_EQ(rt.metrics().kernels.at("mixed_phase_and_loop").threads, 1);
}

TEST(ThreadRules, PhasesSplitAsAskedAndTheConfiguredThreadsByWork) {
  TempDir dir;
  Runtime rt(timed(dir.path()));
  rt.register_kernel(kPhases, "phases.kiln");
  SumCase one, three;
  const Kernel k = rt.kernel("phases_only", range(0, kPoints));
  k.run_on(1, one.xs(), one.ys());
  k.run_on(3, three.xs(), three.ys());
  EXPECT_EQ(three.y, one.y);
  EXPECT_EQ(rt.metrics().kernels.at("phases_only").threads, 3);

  // Configured 7: 50,000 points give 3 threads (one per 16,384), 100 points one.
  Runtime seven(timed(dir.path(), 7));
  seven.register_kernel(kPhases, "phases.kiln");
  SumCase small;
  seven.kernel("phases_only", range(0, 100))(small.xs(), small.ys());
  EXPECT_EQ(seven.metrics().kernels.at("phases_only").threads, 1);
  SumCase large;
  seven.kernel("phases_only", range(0, kPoints))(large.xs(), large.ys());
  EXPECT_EQ(large.y, one.y);
  EXPECT_EQ(seven.metrics().kernels.at("phases_only").threads, 3);
}

TEST(ThreadRules, NoCallAsksForMoreThan1024Threads) {
  TempDir dir;
  Runtime rt(config_for(dir.path()));
  rt.register_kernel(kPhases, "phases.kiln");
  SumCase c;
  const Kernel k = rt.kernel("phases_only", range(0, 100));
  const std::string what = message_of<Error>([&] { k.run_on(65536, c.xs(), c.ys()); });
  EXPECT_NE(what.find("kernel 'phases_only': run_on(65536): a call runs on at most 1024 threads"), std::string::npos)
      << what;
  EXPECT_NE(message_of<Error>([&] { k.run_on(1025, c.xs(), c.ys()); }).find("run_on(1025)"), std::string::npos);

  // Set in C++, past what KILN_THREADS accepts: refused when the Runtime is made.
  Config many = config_for(dir.path());
  many.threads = 5000;
  const std::string configured = message_of<Error>([&] { Runtime over(many); });
  EXPECT_NE(configured.find("Config::threads 5000: expected 0 (the default) to 1024"), std::string::npos)
      << configured;
}

}  // namespace
}  // namespace kiln::testing
