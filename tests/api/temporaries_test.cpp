// Kernel temporaries (`#pragma kiln temporary`): memory a kernel needs during
// a call, laid out as one of its arrays, which kiln allocates once per handle
// and calling thread and the caller never passes. The granule's w diffusion
// uses one on every layout (stencils_test.cpp); here, what a user can see:
// results on any strides, how often memory is allocated, and the call's shape.
#include <barrier>
#include <thread>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// y(i) = 2 x(i-1) + 2 x(i+1) through a temporary t = 2 x, inside [start, end).
const char* kSmooth = R"(#pragma kiln kernel smooth_twice
#pragma kiln array double x[1]
#pragma kiln array double y[1]
#pragma kiln temporary double t[1] like x
#pragma kiln domain start end
for (kiln::index_t i = start; i < end; ++i) t(i) = 2.0 * x(i);
for (kiln::index_t i = start + 1; i + 1 < end; ++i) y(i) = t(i - 1) + t(i + 1);
)";

class Temporaries : public RuntimeTest {
 protected:
  void SetUp() override { rt.register_kernel(kSmooth, "smooth_twice.kiln"); }
  Kernel smooth(std::int64_t n, Mode mode = Mode::specialised) {
    return rt.kernel("smooth_twice", Spec().set("start", 0).set("end", n), mode);
  }
  std::uint64_t allocations() { return rt.metrics().total().temporary_allocations; }
};

// What the kernel must give for x(i) = xs[i] on the domain [0, end) (all of xs by default).
std::vector<double> expected(const std::vector<double>& xs, std::size_t end = 0) {
  std::vector<double> y(xs.size(), -1.0);
  for (std::size_t i = 1; i + 1 < (end ? end : xs.size()); ++i) y[i] = 2.0 * xs[i - 1] + 2.0 * xs[i + 1];
  return y;
}

TEST_F(Temporaries, TheCallerPassesOnlyTheArguments) {
  const KernelDeclaration d = rt.declaration("smooth_twice");
  ASSERT_EQ(d.arguments.size(), 2u);
  EXPECT_EQ(d.arguments[1].name, "y");
  std::vector<double> x = random_field(50, -1, 1, 3), y(50, -1.0), t(50);
  smooth(50)(c_array(x.data(), {50}), c_array(y.data(), {50}));
  EXPECT_EQ(y, expected(x));
  const std::string message = message_of<ArgumentError>(
      [&] { smooth(50)(c_array(x.data(), {50}), c_array(y.data(), {50}), c_array(t.data(), {50})); });
  EXPECT_NE(message.find("smooth_twice"), std::string::npos) << message;
  EXPECT_NE(message.find("3"), std::string::npos) << message;
}

// The temporary takes its array's strides, negative ones and gaps included,
// in both modes: its view type is the array's.
TEST_F(Temporaries, LaidOutAsTheirArrayOnAnyStrides) {
  constexpr std::int64_t n = 300;
  std::vector<double> storage = random_field(3 * n, -1, 1, 5), xs(n);
  for (Mode mode : {Mode::specialised, Mode::generic}) {
    for (std::int64_t stride : {1, 3, -1, -3}) {
      double* first = stride > 0 ? storage.data() : storage.data() + (n - 1) * -stride;
      for (std::int64_t i = 0; i < n; ++i) xs[std::size_t(i)] = first[i * stride];
      std::vector<double> y(n, -1.0);
      const std::int64_t shape[] = {n}, strides[] = {stride};
      smooth(n, mode)(array(first, shape, strides), c_array(y.data(), {n}));
      EXPECT_EQ(y, expected(xs)) << "stride " << stride;
    }
  }
}

// One buffer for a handle called again and again, a larger one only when its
// array grows (the temporary spans the array, not the domain), none when it
// shrinks.
TEST_F(Temporaries, AllocatedOncePerHandleNeverPerCall) {
  const Kernel k = smooth(100);  // the domain [0, 100) on arrays of n >= 100 elements
  auto call = [&](std::int64_t n) {
    std::vector<double> x = random_field(std::size_t(n), -1, 1, 7), y(std::size_t(n), -1.0);
    k(c_array(x.data(), {n}), c_array(y.data(), {n}));
    EXPECT_EQ(y, expected(x, 100)) << n;
  };
  for (int i = 0; i < 20; ++i) call(100);
  EXPECT_EQ(allocations(), 1u);
  call(5000);
  EXPECT_EQ(allocations(), 2u);
  for (int i = 0; i < 5; ++i) call(100);
  EXPECT_EQ(allocations(), 2u);
}

// Threads calling one handle at once each get their own temporaries: none
// sees another's, and memory is allocated per thread at most, not per call.
TEST_F(Temporaries, ThreadsCallingAtOnceShareNothing) {
  constexpr int kThreads = 4, kCalls = 200;
  constexpr std::int64_t n = 4096;
  const Kernel k = smooth(n);
  std::barrier start(kThreads);
  std::vector<int> wrong(kThreads, 0);
  std::vector<std::thread> threads;
  for (int id = 0; id < kThreads; ++id)
    threads.emplace_back([&, id] {
      std::vector<double> x = random_field(n, -1, 1, unsigned(11 + id)), y(n, -1.0);
      const std::vector<double> want = expected(x);
      start.arrive_and_wait();
      for (int c = 0; c < kCalls; ++c) {
        k(c_array(x.data(), {n}), c_array(y.data(), {n}));
        wrong[std::size_t(id)] += y != want;
      }
    });
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong, std::vector<int>(kThreads, 0));
  EXPECT_GE(allocations(), 1u);
  EXPECT_LE(allocations(), std::uint64_t{kThreads});
}

// Timed calls (KILN_METRICS) take the same path.
TEST(TemporariesTimed, TimedCallsHandThemOverToo) {
  TempDir dir;
  Config config = config_for(dir.path());
  config.time_calls = true;
  Runtime rt(config);
  rt.register_kernel(kSmooth, "smooth_twice.kiln");
  std::vector<double> x = random_field(64, -1, 1, 9), y(64, -1.0);
  const Kernel k = rt.kernel("smooth_twice", Spec().set("start", 0).set("end", 64));
  for (int i = 0; i < 3; ++i) k(c_array(x.data(), {64}), c_array(y.data(), {64}));
  EXPECT_EQ(y, expected(x));
  const KernelMetrics m = rt.metrics().kernels.at("smooth_twice");
  EXPECT_EQ(m.phases.at("first_call").count + m.phases.at("run").count, 3u);
  EXPECT_EQ(m.temporary_allocations, 1u);
}

}  // namespace
}  // namespace kiln::testing
