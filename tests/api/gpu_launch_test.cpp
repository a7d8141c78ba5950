// Launching on a GPU where there is none: a clear error that names what is
// missing, and the CPU path unaffected. (On a machine with a GPU,
// cli/gpu/gpu_check runs every kernel on it against the CPU; see docs/manual/gpu.md.)
#include <dlfcn.h>

#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

bool cuda_driver_present() {
  void* handle = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (handle) ::dlclose(handle);
  return handle != nullptr;
}

using GpuLaunch = RuntimeTest;

TEST_F(GpuLaunch, WithoutADriverNamesWhatIsMissingAndTheCpuStillRuns) {
  if (cuda_driver_present()) GTEST_SKIP() << "a CUDA driver is installed here: cli/gpu/gpu_check covers launching";
  ThetaCase c(16, 4, false), ref(16, 4, false);
  try {
    rt.gpu_kernel("update_theta_and_exner", c.spec(0, 16, 0, 4));
    FAIL() << "no GpuError";
  } catch (const GpuError& e) {
    EXPECT_NE(std::string(e.what()).find("libcuda.so.1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no CUDA driver"), std::string::npos) << e.what();
  }
  c.run(rt.kernel("update_theta_and_exner", c.spec(0, 16, 0, 4)));
  ref.reference(0, 16, 0, 4);
  expect_close(c.theta_v, ref.theta_v);
  EXPECT_FALSE(GpuKernel());  // an empty handle
  EXPECT_THROW(GpuKernel().launch(nullptr, {}), Error);
}

// A body that loops by hand (no kiln::for_each_*) runs on one GPU thread, as
// on one CPU thread (issue 33, item 1): launched on the whole grid, every
// thread would add its own sum into total(0).
TEST_F(GpuLaunch, APlainLoopKernelLaunchesOneThread) {
  if (!cuda_driver_present()) GTEST_SKIP() << "no CUDA driver here: runs on a machine with a GPU (issue 31)";
  rt.register_kernel(R"(#pragma kiln kernel gpu_plain_loop_sum
#pragma kiln array double x[n]
#pragma kiln array double total[1]
#pragma kiln domain start end
#pragma kiln size n contains start end
for (kiln::index_t i = start; i < end; ++i) total(0) += x(i) * x(i);
)",
                     "gpu_plain_loop_sum.kiln");
  const GpuKernel k = rt.gpu_kernel("gpu_plain_loop_sum", Spec().set("start", 0).set("end", 64));
  EXPECT_EQ(k.grid(), 1);
  EXPECT_EQ(k.block(), 1);
}

// Tiered start leaves GPU kernels alone (docs/manual/tiered-start.md): the
// specialised build at once, no generic one, nothing queued to wait for.
TEST_F(GpuLaunch, TieredStartGivesAGpuKernelItsSpecialisedBuildAtOnce) {
  if (!cuda_driver_present()) GTEST_SKIP() << "no CUDA driver here: runs on a machine with a GPU (issue 34)";
  Config config = config_for(dir.path());
  config.tiered = true;
  Runtime tiered(config);
  ThetaCase c(16, 4, false);
  EXPECT_TRUE(tiered.gpu_kernel("update_theta_and_exner", c.spec(0, 16, 0, 4)));
  tiered.wait_for_specialised();
  const MetricsSnapshot m = tiered.metrics();
  EXPECT_EQ(m.kernels.count("update_theta_and_exner (generic)"), 0U);
  EXPECT_EQ(m.total().compiles, 1U);
}

}  // namespace
}  // namespace kiln::testing
