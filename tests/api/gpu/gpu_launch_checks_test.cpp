// What GpuKernel::launch refuses before anything is queued
// (runtime/gpu/gpu_launch.cpp: a GPU kernel cannot refuse a call itself, so a
// kernel whose arrays declare extents is checked on the host), and check
// mode's warning that GPU kernels are built unchecked.
#include "tests/api/gpu/gpu_support.hpp"
#include "tests/api/stencil_cases.hpp"

namespace kiln::testing {
namespace {

// A call the kernel must refuse, and the words its ArgumentError must hold.
struct BadCall {
  std::string what;
  bool beyond;  // the kernel resolved for a domain past the arrays; else for the arrays' own
  std::vector<kiln_arg> args;
  std::string cause;
};

// The same refusals for host or device views of the same call: `c` in C
// order (the kernels' specialisation), `fortran` in Fortran order,
// `int_area` an int32 array shaped as the first argument (area, double).
std::vector<BadCall> bad_calls(const std::vector<kiln_arg>& c, const std::vector<kiln_arg>& fortran,
                               const kiln_arg& int_area, std::int64_t cells) {
  std::vector<kiln_arg> wrong_type = c;
  wrong_type[0] = int_area;
  return {{"a domain 3 cells past the arrays", true, c,
           "[horizontal_start, horizontal_end) = [0, " + std::to_string(cells + 3) + ") lies outside size cells"},
          {"Fortran-order arrays for a C-order kernel", false, fortran, "differ from those it was specialised for"},
          {"int32 where area is double", false, wrong_type, "argument 0 'area': expected"},
          {"the table left out", false, {c.begin(), c.end() - 1}, "arguments (area, "}};
}

// The w diffusion: arrays that declare extents (KernelInfo::checked()), three
// outputs that hold poison() before a call: the canary.
class GpuLaunchChecks : public GpuTest {
 protected:
  const Grid grid = Grid::torus(8, 6);
  const StencilUnderTest s = w_diffusion(grid);
  const std::int64_t nc = grid.size(Entity::cell);
  const Spec inside = w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc);
  const Spec beyond = w_settings(domain(0, nc + 3, 0, kLevels), 2, 3, 0, nc + 3);  // 3 cells past the arrays

  // A call that must throw ArgumentError with `cause` in its message.
  template <class Call>
  void expect_refused(const std::string& what, const std::string& cause, Call&& call) {
    try {
      call();
      ADD_FAILURE() << what << ": no ArgumentError";
    } catch (const ArgumentError& e) {
      std::printf("[ refused  ] %s: %s\n", what.c_str(), e.what());
      EXPECT_NE(std::string(e.what()).find(cause), std::string::npos) << what << ": " << e.what();
    }
  }
  void expect_untouched(const std::string& what, const Arguments& after, const Arguments& before) {
    for (const std::string& out : s.outputs) expect_identical(what + ": " + out, after.field(out), before.field(out));
  }
  // After the device has finished all it was given, `device`'s outputs still
  // hold the bits of `before`.
  void expect_untouched(const std::string& what, const DeviceArgs& device, Arguments& copied, const Arguments& before) {
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
    device.copy_back();
    expect_untouched(what, copied, before);
  }
};

// The CPU refuses the same calls with the same words (runtime/call/): what a
// machine without a GPU can check of the GPU test below, its words included.
TEST_F(GpuLaunchChecks, TheCpuRefusesTheSameCalls) {
  const Arguments c_order = s.make(Layout::c()), fortran = s.make(Layout::fortran());
  const Kernel too_far = cpu_kernel(rt, s.kernel, c_order.spec(beyond));
  const Kernel good = cpu_kernel(rt, s.kernel, c_order.spec(inside));
  const IndexArray int_area(nc, 0, false, 0);
  for (const BadCall& bad : bad_calls(c_order.views(), fortran.views(), int_area.view(), nc))
    expect_refused("CPU: " + bad.what, bad.cause, [&] { (bad.beyond ? too_far : good).invoke(bad.args); });
  expect_untouched("CPU, after the refused calls", c_order, s.make(Layout::c()));
  expect_untouched("CPU, after the refused calls (Fortran order)", fortran, s.make(Layout::fortran()));
}

TEST_F(GpuLaunchChecks, ABadDomainOrArgumentsAreRefusedBeforeAnyLaunch) {
  const Arguments c_order = s.make(Layout::c()), fortran = s.make(Layout::fortran());
  Arguments expected = c_order;
  expected.run(cpu_kernel(rt, s.kernel, c_order.spec(inside)), 1);
  const GpuKernel too_far = gpu_kernel(rt, s.kernel, c_order.spec(beyond));
  const GpuKernel good = gpu_kernel(rt, s.kernel, c_order.spec(inside));
  if (preparing()) return;
  Arguments on_device = c_order, fortran_on_device = fortran;
  const IndexArray int_area(nc, 0, false, 0);
  const DeviceArgs device(on_device.views()), fortran_device(fortran_on_device.views()),
      int_device(std::vector<kiln_arg>{int_area.view()});
  for (const BadCall& bad : bad_calls(device.args(), fortran_device.args(), int_device.args()[0], nc))
    expect_refused("GPU: " + bad.what, bad.cause, [&] { (bad.beyond ? too_far : good).launch(nullptr, bad.args); });
  expect_untouched("GPU, after the refused launches", device, on_device, c_order);
  expect_untouched("GPU, after the refused launches (Fortran order)", fortran_device, fortran_on_device, fortran);
  // The same arrays launched right: the canary could see a launch.
  good.launch(nullptr, device.args());
  cuda_check(cudaStreamSynchronize(cudaStreamPerThread), "cudaStreamSynchronize");
  device.copy_back();
  Difference d;
  for (const std::string& out : s.outputs) d.add(out, on_device.field(out), expected.field(out));
  std::printf("[ gpu      ] the good launch after them: %s\n", d.text().c_str());
  EXPECT_LE(d.max_relative, kGpuRtol) << d.text();
  EXPECT_TRUE(changed_inside(s, on_device, c_order, box_of(inside)));
}

// KILN_CHECK=1: GPU kernels are built without bounds checks; gpu_kernel()
// says so once (a process-wide warning), and the kernel runs as without it.
TEST_F(GpuLaunchChecks, CheckModeWarnsOnceAndTheKernelStillRuns) {
  Config config = rt.config();
  config.check = true;
  config.log_level = "warn";  // the warning's level, whatever KILN_LOG_LEVEL says
  Runtime checked(config);
  const StencilUnderTest t = turbulence_temporaries(grid);
  const Spec settings = domain(0, nc, 0, kLevels);
  const Arguments before = t.make(Layout::c());
  Arguments expected = before;
  expected.run(cpu_kernel(checked, t.kernel, before.spec(settings)), 1);  // bounds-checked on the CPU
  if (preparing()) {
    gpu_kernel(checked, t.kernel, before.spec(settings));
    return report(checked);
  }
  ::testing::internal::CaptureStderr();
  const GpuKernel k = gpu_kernel(checked, t.kernel, before.spec(settings));
  gpu_kernel(checked, t.kernel, before.spec(settings));  // asked again: no second warning
  const std::string said = ::testing::internal::GetCapturedStderr();
  std::printf("[ stderr   ] %s", said.c_str());
  const std::string warning = "KILN_CHECK: GPU kernels are built without bounds checks";
  const std::size_t first = said.find(warning);
  EXPECT_NE(first, std::string::npos) << said;
  EXPECT_EQ(said.find(warning, first + 1), std::string::npos) << "warned twice: " << said;
  Arguments gpu = before;
  run_on_gpu(k, gpu);
  Difference d;
  for (const std::string& out : t.outputs) d.add(out, gpu.field(out), expected.field(out));
  std::printf("[ gpu      ] check mode: %s\n", d.text().c_str());
  EXPECT_LE(d.max_relative, kGpuRtol) << d.text();
  report(checked);
}

}  // namespace
}  // namespace kiln::testing
