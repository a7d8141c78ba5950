// NVRTC through dlopen: CUBINs that are ELF files for the asked architecture,
// PTX for a virtual one, clear errors for a broken source or an unsupported
// architecture. NVRTC needs no GPU; where it is not installed, the tests say
// so and skip.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <regex>
#include <string>

#include "jit/nvrtc.hpp"
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

using testing::elf_header;
using testing::ElfHeader;
using testing::kEmCuda;
using test::value_of;

// The architecture of a name the tests know to be one.
CudaArch arch(const std::string& name) { return value_of(parse_cuda_arch(name)); }

class NvrtcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const base::Result<const Nvrtc*> nvrtc = Nvrtc::get();
    if (!nvrtc) GTEST_SKIP() << "NVRTC is not installed here: " << nvrtc.error().message;
    nvrtc_ = *nvrtc;
  }
  const Nvrtc* nvrtc_ = nullptr;
};

TEST_F(NvrtcTest, ReportsVersionAndArchitectures) {
  EXPECT_GE(nvrtc_->major(), 12);
  EXPECT_FALSE(nvrtc_->supported().empty());
  std::printf("NVRTC %s from %s\n", nvrtc_->version().c_str(), nvrtc_->library().c_str());
}

// The identity (in every GPU build's key) names the library's file and size,
// not its folder: a cache precompiled where the toolkit is under one prefix
// serves a GPU node with the same release under another.
TEST_F(NvrtcTest, IdentityNamesTheLibraryNotWhereItIsInstalled) {
  const std::string identity = nvrtc_->identity();
  EXPECT_TRUE(std::regex_match(identity, std::regex("nvrtc [0-9]+\\.[0-9]+ libnvrtc[^ /]* [1-9][0-9]* bytes")))
      << identity;
}

TEST_F(NvrtcTest, CubinIsAnElfForTheAskedArchitecture) {
  for (int number : {80, 90}) {
    const GpuCompileOutput out = value_of(nvrtc_->compile(kSaxpy, "saxpy.cu", arch("sm_" + std::to_string(number))));
    ASSERT_TRUE(out.ok) << out.log;
    const ElfHeader h = elf_header(out.binary);
    EXPECT_TRUE(h.is_elf64);
    EXPECT_EQ(h.machine, kEmCuda);
    EXPECT_EQ(h.cuda_sm(), static_cast<std::uint32_t>(number)) << std::hex << h.flags;
    EXPECT_GT(out.compile_ms, 0.0);
  }
}

TEST_F(NvrtcTest, VirtualArchitectureGivesPtx) {
  const GpuCompileOutput out = value_of(nvrtc_->compile(kSaxpy, "saxpy.cu", arch("compute_90")));
  ASSERT_TRUE(out.ok) << out.log;
  const std::string ptx(out.binary.begin(), out.binary.end());
  EXPECT_NE(ptx.find(".target sm_90"), std::string::npos) << ptx.substr(0, 400);
  EXPECT_NE(ptx.find(".entry saxpy"), std::string::npos);
}

TEST_F(NvrtcTest, BrokenSourceGivesTheLogWithItsLine) {
  const GpuCompileOutput out = value_of(nvrtc_->compile(
      "extern \"C\" __global__ void k() {\n  undefined_name = 1;\n}\n", "broken.cu", arch("sm_90")));
  EXPECT_FALSE(out.ok);
  EXPECT_TRUE(out.binary.empty());
  EXPECT_NE(out.log.find("broken.cu(2)"), std::string::npos) << out.log;
  EXPECT_NE(out.log.find("undefined_name"), std::string::npos) << out.log;
}

TEST_F(NvrtcTest, UnsupportedArchitectureIsRefusedWithTheSupportedList) {
  const base::Result<GpuCompileOutput> out = nvrtc_->compile(kSaxpy, "saxpy.cu", arch("sm_35"));
  ASSERT_FALSE(out.has_value()) << "sm_35 accepted";
  EXPECT_EQ(out.error().kind, base::Failure::Kind::invalid);
  const std::string& message = out.error().message;
  EXPECT_EQ(message.rfind("kiln: NVRTC " + nvrtc_->version() + " cannot compile for sm_35; it supports", 0), 0u)
      << message;
  EXPECT_NE(message.find(" 90"), std::string::npos) << message;
}

TEST(CudaArch, ParsesRealAndVirtualNames) {
  EXPECT_EQ(arch("sm_90").number, 90);
  EXPECT_FALSE(arch("sm_90").virtual_arch);
  EXPECT_TRUE(arch("compute_80").virtual_arch);
  EXPECT_EQ(arch("compute_80").name(), "compute_80");
  for (const std::string bad : {"", "sm_", "sm_9x", "gfx90a", "compute_-1", "sm90"}) {
    const base::Result<CudaArch> parsed = parse_cuda_arch(bad);
    ASSERT_FALSE(parsed.has_value()) << bad;
    EXPECT_EQ(parsed.error().message, "kiln: '" + bad + "' is not a CUDA architecture (sm_90, compute_90, ...)");
  }
}

}  // namespace
}  // namespace kiln::jit
