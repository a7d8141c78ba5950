// GPU builds without a GPU: every kernel of kernels_src/ through NVRTC for
// real (CUBIN) and virtual (PTX) architectures and through hipRTC for
// gfx90a, into the cache; keys per architecture; hits on the second ask;
// clear errors. Each backend's tests skip with the reason where its compiler
// is not installed.
#include <cstring>
#include <string>

#include "cache/disk_store.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "tests/api/test_support.hpp"
#include "tests/gpu_elf.hpp"

namespace kiln::testing {
namespace {

// The stored binary of `key_hex` in `dir`.
std::vector<char> stored(const std::filesystem::path& dir, const std::string& key_hex) {
  cache::Key key;
  if (!cache::Key::from_hex(key_hex, key)) return {};
  return cache::DiskStore(dir).get(key).payload.value_or(std::vector<char>());
}

// What a CUBIN says it is for: EM_CUDA and the SM number.
void expect_cubin_for(const std::vector<char>& binary, int sm) {
  const ElfHeader h = elf_header(binary);
  ASSERT_TRUE(h.is_elf);
  EXPECT_EQ(h.machine, kEmCuda);
  EXPECT_EQ(h.cuda_sm(), static_cast<std::uint32_t>(sm)) << std::hex << h.flags;
}

class GpuPrecompile : public RuntimeTest {
 protected:
  void SetUp() override {
    try {
      rt.precompile("update_theta_and_exner", ThetaCase(8, 4, false).spec(0, 8, 0, 4), {.arch = "sm_90"});
    } catch (const ToolchainError& e) {
      GTEST_SKIP() << "no NVRTC here: " << e.what();
    }
  }
};

// The granule's seven kernels on a limited-area grid in ICON's layout
// (every zone present), specialised and generic, and stencil7.
std::vector<KernelRequest> every_kernel(granule::Granule& granule) {
  std::vector<KernelRequest> requests;
  for (const granule::Stage& stage : granule.stages()) {
    requests.push_back({stage.kernel, stage.spec, Mode::specialised});
    requests.push_back({stage.kernel, stage.spec, Mode::generic});
  }
  Spec s;
  s.set("nx", 20).set("ny", 16).set("nz", 12).set("c0", 0.4).set("cx", 0.1).set("cy", 0.1).set("cz", 0.1);
  requests.push_back({"stencil7", s, Mode::specialised});
  return requests;
}

TEST_F(GpuPrecompile, EveryKernelCompilesForRealAndVirtualArchitectures) {
  const granule::Grid grid = granule::Grid::limited_area(16, 14);
  granule::Granule g(grid, 6, granule::Layout::fortran);
  const std::vector<KernelRequest> requests = every_kernel(g);
  for (const char* arch : {"sm_80", "sm_90", "compute_90"}) {
    for (const KernelRequest& r : requests) {
      const std::string key = rt.precompile(r.name, r.spec, {.arch = arch}, r.mode);
      const std::vector<char> binary = stored(dir.path(), key);
      ASSERT_FALSE(binary.empty()) << r.name << " " << arch;
      if (arch[0] == 's') {
        expect_cubin_for(binary, std::atoi(arch + 3));
      } else {
        const std::string ptx(binary.begin(), binary.end());
        EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << r.name;
        EXPECT_NE(ptx.find(".entry kiln_" + key), std::string::npos) << r.name;
      }
    }
  }
}

TEST_F(GpuPrecompile, KeysDifferPerArchitectureAndASecondAskIsAHit) {
  ThetaCase c(32, 8, true);
  const Spec spec = c.spec(1, 31, 0, 8);
  const std::string sm80 = rt.precompile("update_theta_and_exner", spec, {.arch = "sm_80"});
  const std::string sm90 = rt.precompile("update_theta_and_exner", spec, {.arch = "sm_90"});
  const std::string ptx90 = rt.precompile("update_theta_and_exner", spec, {.arch = "compute_90"});
  EXPECT_NE(sm80, sm90);
  EXPECT_NE(sm90, ptx90);
  EXPECT_NE(sm90, rt.kernel("update_theta_and_exner", spec).key());  // the CPU build is another entry
  const KernelMetrics before = rt.metrics().kernels.at("update_theta_and_exner [cuda sm_90]");
  Runtime second(config_for(dir.path()));
  EXPECT_EQ(second.precompile("update_theta_and_exner", spec, {.arch = "sm_90"}), sm90);
  const KernelMetrics after = second.metrics().kernels.at("update_theta_and_exner [cuda sm_90]");
  EXPECT_EQ(before.compiles, 2u);  // SetUp's and this test's specialisation
  EXPECT_EQ(after.compiles, 0u);
  EXPECT_EQ(after.disk_hits, 1u);
}

// KILN_FP_CONTRACT=off reaches NVRTC (--fmad=false): no fused multiply-add in
// the kernel's PTX, where NVRTC's default makes them, and another key.
TEST_F(GpuPrecompile, ContractionOffLeavesNoFusedMultiplyAdd) {
  const Spec spec = ThetaCase(8, 4, false).spec(0, 8, 0, 4);  // th0 + area * z_temp: a multiply-add
  Config off_config = config_for(dir.path());
  off_config.fp_contract = "off";
  Runtime off(off_config);
  const std::string on_key = rt.precompile("update_theta_and_exner", spec, {.arch = "compute_90"});
  const std::string off_key = off.precompile("update_theta_and_exner", spec, {.arch = "compute_90"});
  EXPECT_NE(on_key, off_key);
  const std::vector<char> on_ptx = stored(dir.path(), on_key), off_ptx = stored(dir.path(), off_key);
  EXPECT_NE(std::string(on_ptx.begin(), on_ptx.end()).find("fma.rn.f64"), std::string::npos);
  const std::string unfused(off_ptx.begin(), off_ptx.end());
  EXPECT_EQ(unfused.find("fma.rn.f64"), std::string::npos) << unfused;
  EXPECT_NE(unfused.find("mul.rn.f64"), std::string::npos) << unfused;
  EXPECT_NE(off.generated_source("update_theta_and_exner", spec, {.arch = "sm_90"}).options.find("--fmad=false"),
            std::string::npos);
}

TEST_F(GpuPrecompile, UnsupportedOrMalformedArchitectureIsAnError) {
  const Spec spec = ThetaCase(8, 4, false).spec(0, 8, 0, 4);
  const auto what = message_of<Error>([&] { rt.precompile("update_theta_and_exner", spec, {.arch = "sm_35"}); });
  EXPECT_NE(what.find("sm_35"), std::string::npos) << what;
  EXPECT_NE(what.find("supports"), std::string::npos) << what;
  const auto bad = message_of<Error>([&] { rt.precompile("update_theta_and_exner", spec, {.arch = "gfx90a"}); });
  EXPECT_NE(bad.find("'gfx90a'"), std::string::npos) << bad;
}

TEST_F(GpuPrecompile, BrokenKernelGivesNvrtcsLogWithItsOwnLines) {
  rt.register_kernel(
      "#pragma kiln kernel broken_gpu\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
      "kiln::for_each_column(0, n, [&](kiln::index_t c) {\n  x(c) = undefined_name;\n});\n",
      "broken_gpu.kiln");
  try {
    rt.precompile("broken_gpu", Spec().set("n", 4), {.arch = "sm_90"});
    FAIL() << "no CompileError";
  } catch (const CompileError& e) {
    // Line 5 of the kernel's own file, as on the CPU.
    EXPECT_NE(e.diagnostics().find("broken_gpu.kiln(5)"), std::string::npos) << e.diagnostics();
    EXPECT_NE(e.diagnostics().find("undefined_name"), std::string::npos) << e.diagnostics();
  }
}

class HipPrecompile : public RuntimeTest {
 protected:
  void SetUp() override {
    try {
      rt.precompile("update_theta_and_exner", ThetaCase(8, 4, false).spec(0, 8, 0, 4),
                    {.backend = GpuBackend::hip, .arch = "gfx90a"});
    } catch (const ToolchainError& e) {
      GTEST_SKIP() << "no hipRTC here: " << e.what();
    }
  }
};

constexpr std::uint32_t kMachGfx90a = 0x3f;  // EF_AMDGPU_MACH_AMDGCN_GFX90A

TEST_F(HipPrecompile, EveryKernelCompilesForGfx90a) {
  const granule::Grid grid = granule::Grid::limited_area(16, 14);
  granule::Granule g(grid, 6, granule::Layout::fortran);
  for (const KernelRequest& r : every_kernel(g)) {
    const std::string key = rt.precompile(r.name, r.spec, {.backend = GpuBackend::hip, .arch = "gfx90a"}, r.mode);
    const std::vector<char> binary = stored(dir.path(), key);
    const ElfHeader h = elf_header(binary);
    ASSERT_TRUE(h.is_elf) << r.name;
    EXPECT_EQ(h.machine, kEmAmdgpu) << r.name;
    EXPECT_EQ(h.amdgpu_mach(), kMachGfx90a) << r.name;
  }
}

TEST_F(HipPrecompile, KeysDifferFromCudaAndArchitecturesThatCrashAreRefused) {
  const Spec spec = ThetaCase(8, 4, false).spec(0, 8, 0, 4);
  const std::string gfx90a = rt.precompile("update_theta_and_exner", spec, {.backend = GpuBackend::hip, .arch = "gfx90a"});
  const std::string gfx908 = rt.precompile("update_theta_and_exner", spec, {.backend = GpuBackend::hip, .arch = "gfx908"});
  EXPECT_NE(gfx90a, gfx908);
  EXPECT_EQ(rt.metrics().kernels.at("update_theta_and_exner [hip gfx90a]").compiles, 1u);  // SetUp's
  EXPECT_EQ(rt.metrics().kernels.at("update_theta_and_exner [hip gfx90a]").disk_hits, 1u);
  const auto what = message_of<Error>(
      [&] { rt.precompile("update_theta_and_exner", spec, {.backend = GpuBackend::hip, .arch = "gfx942"}); });
  EXPECT_NE(what.find("'gfx942'"), std::string::npos) << what;
  EXPECT_NE(what.find("gfx90a"), std::string::npos) << what;
}

TEST_F(HipPrecompile, BrokenKernelGivesTheLogWithItsOwnLines) {
  rt.register_kernel(
      "#pragma kiln kernel broken_hip\n#pragma kiln array double x[1]\n#pragma kiln domain n\n"
      "kiln::for_each_column(0, n, [&](kiln::index_t c) {\n  x(c) = undefined_name;\n});\n",
      "broken_hip.kiln");
  const auto what = message_of<CompileError>(
      [&] { rt.precompile("broken_hip", Spec().set("n", 4), {.backend = GpuBackend::hip, .arch = "gfx90a"}); });
  EXPECT_NE(what.find("broken_hip.kiln:5:"), std::string::npos) << what;
  EXPECT_NE(what.find("undefined_name"), std::string::npos) << what;
}

}  // namespace
}  // namespace kiln::testing
