// hipRTC through dlopen: AMD code objects for each allowed architecture (the
// ELF's machine and EF_AMDGPU_MACH), the log for a broken source, and a
// refusal, not a crash, for an architecture this ROCm aborts on. Skips with
// the reason where ROCm's hipRTC is not installed.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <string>

#include "jit/hiprtc.hpp"
#include "tests/gpu_elf.hpp"
#include "tests/jit/jit_test_support.hpp"

namespace kiln::jit {
namespace {

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(double a, const double* x, double* y, long n) {
  const long i = blockIdx.x * (long)blockDim.x + threadIdx.x;
  if (i < n) y[i] = a * x[i] + y[i];
}
)";

using testing::kEmAmdgpu;

// EF_AMDGPU_MACH_AMDGCN_* (LLVM's ELF.h), per architecture.
const std::map<std::string_view, std::uint32_t> kMach = {
    {"gfx900", 0x2c}, {"gfx906", 0x2f}, {"gfx908", 0x30}, {"gfx90a", 0x3f}, {"gfx1030", 0x36}};

class HiprtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const base::Result<const Hiprtc*> hiprtc = Hiprtc::get();
    if (!hiprtc) GTEST_SKIP() << "hipRTC is not installed here: " << hiprtc.error().message;
    hiprtc_ = *hiprtc;
  }
  const Hiprtc* hiprtc_ = nullptr;
};

TEST_F(HiprtcTest, CodeObjectIsAnElfForEachAllowedArchitecture) {
  ASSERT_EQ(Hiprtc::supported().size(), kMach.size());
  for (std::string_view arch : Hiprtc::supported()) {
    const GpuCompileOutput out = test::value_of(hiprtc_->compile(kSaxpy, "saxpy.hip", arch, Hiprtc::kernel_options()));
    ASSERT_TRUE(out.ok) << arch << ": " << out.log;
    const testing::ElfHeader h = testing::elf_header(out.binary);
    ASSERT_TRUE(h.is_elf) << arch;
    EXPECT_EQ(h.machine, kEmAmdgpu) << arch;
    EXPECT_EQ(h.amdgpu_mach(), kMach.at(arch)) << arch << std::hex << " e_flags " << h.flags;
  }
  EXPECT_NE(hiprtc_->identity().find("libamdhip64"), std::string::npos) << hiprtc_->identity();
}

TEST_F(HiprtcTest, BrokenSourceGivesTheLogWithItsLine) {
  const GpuCompileOutput out = test::value_of(hiprtc_->compile(
      "extern \"C\" __global__ void k() {\n  undefined_name = 1;\n}\n", "broken.hip", "gfx90a"));
  EXPECT_FALSE(out.ok);
  EXPECT_NE(out.log.find("broken.hip:2:"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("undefined_name"), std::string::npos) << out.log;
}

// gfx942 (MI300A) aborts inside this ROCm's comgr: refused before the call.
TEST_F(HiprtcTest, ArchitecturesThatCrashThisRocmAreRefused) {
  for (const char* arch : {"gfx942", "gfx940", "gfx1100", "sm_90", ""}) {
    const base::Result<GpuCompileOutput> out = hiprtc_->compile(kSaxpy, "saxpy.hip", arch);
    ASSERT_FALSE(out.has_value()) << arch << " accepted";
    EXPECT_EQ(out.error().kind, base::Failure::Kind::invalid) << arch;
    EXPECT_EQ(out.error().message.rfind("kiln: hipRTC cannot compile for '" + std::string(arch) + "' here;", 0), 0u)
        << out.error().message;
    EXPECT_NE(out.error().message.find("gfx90a"), std::string::npos) << out.error().message;
  }
}

}  // namespace
}  // namespace kiln::jit
