// Every kernel of the stencil harness (stencil_cases.hpp) on the GPU against
// the same kernel on the CPU, on both grids, in every layout (C order,
// Fortran order, ICON's blocks of 7) and both modes: each output bit-identical
// or within kGpuRtol (NVRTC fuses multiply-adds where clang does not), every
// point outside the domain and the last block's padding untouched. With
// KILN_FP_CONTRACT=off neither side fuses (NVRTC gets --fmad=false): then
// every output must be bit-identical. One line per kernel, setting, layout
// and mode says which.
#include "tests/api/gpu/gpu_support.hpp"
#include "tests/api/stencil_cases.hpp"

namespace kiln::testing {
namespace {

// The first settings of each kernel: the whole grid, then a part of it with
// its edges mid-zone (and mid-block); contraction off, the whole grid. Fewer
// than the CPU's stencil tests, so that a prepared cache stays small and
// prepares in about a minute.
constexpr std::size_t kSettingsPerKernel = 2, kSettingsContractionOff = 1;

const Layout kLayouts[] = {Layout::c(), Layout::fortran(), Layout::blocked(7)};
constexpr Mode kModes[] = {Mode::specialised, Mode::generic};

// One launch to check: a setting in a layout and mode, its arguments before
// the call and the spec the kernel is resolved with.
struct Launch {
  std::size_t setting;
  Layout layout;
  Mode mode;
  Arguments before;
  Spec spec;
};

// The first `count` settings of `c`, in every layout and mode.
std::vector<Launch> launches(const StencilCase& c, std::size_t count) {
  std::vector<Launch> out;
  for (std::size_t i = 0; i < std::min(count, c.settings.size()); ++i)
    for (const Layout& layout : kLayouts) {
      const Arguments before = c.stencil.make(layout);
      const Spec& settings = c.settings[i].settings;
      for (Mode mode : kModes)
        out.push_back({i, layout, mode, before,
                       mode == Mode::specialised ? before.spec(settings) : before.generic_spec(settings)});
    }
  return out;
}

std::string describe(const StencilUnderTest& s, bool lam, const Launch& l) {
  return s.kernel + ", " + (lam ? "limited area" : "torus") + ", setting " + std::to_string(l.setting) + ", " +
         l.layout.name() + ", " + (l.mode == Mode::specialised ? "specialised" : "generic");
}

class GpuStencils : public GpuTest, public ::testing::WithParamInterface<std::tuple<bool, int>> {
 protected:
  bool lam = std::get<0>(GetParam());
  Grid grid = lam ? Grid::limited_area(16, 16) : Grid::torus(8, 6);  // stencils_test.cpp's grids
  StencilCase c = stencil_cases(grid)[std::size_t(std::get<1>(GetParam()))];

  // Each launch on `r`'s CPU build, then (preparing: into the cache) on its
  // GPU build, the outputs compared within `rtol` (0: bit-identical).
  void check(Runtime& r, const std::vector<Launch>& all, double rtol) {
    std::vector<KernelRequest> requests;
    for (const Launch& l : all) requests.push_back({c.stencil.kernel, l.spec, l.mode});
    cpu_kernels += int(requests.size());
    const std::vector<Kernel> cpu = r.kernels(requests);  // compiled together on a cold cache
    for (std::size_t i = 0; i < all.size(); ++i) {
      Arguments expected = all[i].before;
      expected.run(cpu[i], 1);
      if (preparing()) {
        gpu_kernel(r, c.stencil.kernel, all[i].spec, all[i].mode);
        continue;
      }
      compare(r, all[i], expected, rtol);
    }
  }

  // The GPU's outputs against the CPU's; a failure is reported, not thrown.
  void compare(Runtime& r, const Launch& l, const Arguments& cpu, double rtol) {
    const std::string what = describe(c.stencil, lam, l) + ", contraction " + r.config().fp_contract;
    try {
      Arguments gpu = l.before;
      run_on_gpu(gpu_kernel(r, c.stencil.kernel, l.spec, l.mode), gpu);
      Difference d;
      for (const std::string& out : c.stencil.outputs) {
        d.add(out, gpu.field(out), cpu.field(out));
        EXPECT_TRUE(gpu.field(out).same_padding(l.before.field(out))) << what << ": " << out << "'s padding changed";
      }
      std::printf("[ gpu      ] %s: %s\n", what.c_str(), d.text().c_str());
      EXPECT_TRUE(d.identical || d.max_relative <= rtol) << what << ": " << d.text();
    } catch (const std::exception& e) {
      ADD_FAILURE() << what << ": " << e.what();
    }
  }
};

TEST_P(GpuStencils, EveryLayoutAndModeMatchesTheCpu) {
  check(rt, launches(c, kSettingsPerKernel), kGpuRtol);
}

TEST_P(GpuStencils, WithContractionOffEveryLayoutAndModeIsBitIdentical) {
  Config config = rt.config();
  config.fp_contract = "off";
  Runtime unfused(config);
  check(unfused, launches(c, kSettingsContractionOff), 0.0);
  report(unfused);
}

std::string case_name(const ::testing::TestParamInfo<std::tuple<bool, int>>& info) {
  const Grid grid = Grid::torus(8, 6);
  return std::string(std::get<0>(info.param) ? "LimitedArea_" : "Torus_") +
         stencil_cases(grid)[std::size_t(std::get<1>(info.param))].stencil.kernel;
}

INSTANTIATE_TEST_SUITE_P(Kernels, GpuStencils,
                         ::testing::Combine(::testing::Bool(),
                                            ::testing::Range(0, int(stencil_cases(Grid::torus(8, 6)).size()))),
                         case_name);

}  // namespace
}  // namespace kiln::testing
