// bool arrays (`#pragma kiln array bool`): a mask read and a mask written,
// one byte per element as C++, NumPy and Fortran's logical(c_bool) store
// them. The same results generic and specialised, on 1 and on 7 threads, as
// a reference written here; other element types refused for them and they
// for others; the element type is part of the kernel's cache key.
#include "tests/api/test_support.hpp"

namespace kiln::testing {
namespace {

// Halves x where `mask` holds, then clips at `limit`, recording where it clipped.
constexpr const char* kMaskedClip = R"(#pragma kiln kernel masked_clip
#pragma kiln size cells
#pragma kiln array double x[cells][levels]
#pragma kiln array bool mask[cells][levels]
#pragma kiln array double y[cells][levels]
#pragma kiln array bool clipped[cells][levels]
#pragma kiln domain h_start h_end levels
#pragma kiln static double limit
kiln::for_each_point(x, h_start, h_end, 0, levels, [&](kiln::index_t c, kiln::index_t k) {
  const double v = mask(c, k) ? 0.5 * x(c, k) : x(c, k);
  clipped(c, k) = v > limit;
  y(c, k) = clipped(c, k) ? limit : v;
});
)";

constexpr int kCells = 40000, kLevels = 3;  // enough points for 7 threads to share
constexpr double kLimit = 0.6;

struct MaskCase {
  std::vector<double> x = random_field(std::size_t(kCells) * kLevels, 0.0, 1.0, 3);
  std::vector<double> y = std::vector<double>(x.size(), -1.0);
  // std::vector<bool> packs bits: these are bytes, as the kernel reads them.
  std::unique_ptr<bool[]> mask = std::make_unique<bool[]>(x.size());
  std::unique_ptr<bool[]> clipped = std::make_unique<bool[]>(x.size());

  MaskCase() {
    for (std::size_t i = 0; i < x.size(); ++i) mask[i] = (i * 7) % 3 == 0;
  }
  // Fortran order: cells contiguous, as ICON holds its fields.
  template <class T>
  kiln_arg view(T* data) {
    return f_array(data, {kCells, kLevels});
  }
  void run(const Kernel& k, int threads) {
    k.run_on(threads, view(x.data()), view(mask.get()), view(y.data()), view(clipped.get()));
  }
  std::vector<bool> clipped_values() const { return std::vector<bool>(clipped.get(), clipped.get() + x.size()); }
};

Spec spec() { return Spec().set("h_start", 0).set("h_end", kCells).set("levels", kLevels).set("limit", kLimit); }

class BoolArrays : public RuntimeTest {
 protected:
  void SetUp() override { rt.register_kernel(kMaskedClip, "masked_clip.kiln"); }
};

TEST_F(BoolArrays, AMaskIsReadAndWrittenAsTheReferenceDoes) {
  MaskCase got;
  got.run(rt.kernel("masked_clip", spec()), 1);
  std::size_t halved = 0, clips = 0;
  for (std::size_t i = 0; i < got.x.size(); ++i) {
    const double v = got.mask[i] ? 0.5 * got.x[i] : got.x[i];
    ASSERT_EQ(got.clipped[i], v > kLimit) << i;
    ASSERT_EQ(got.y[i], v > kLimit ? kLimit : v) << i;
    halved += got.mask[i];
    clips += got.clipped[i];
  }
  // Both branches of both masks are taken.
  EXPECT_GT(halved, 0u);
  EXPECT_LT(halved, got.x.size());
  EXPECT_GT(clips, 0u);
  EXPECT_LT(clips, got.x.size());
}

TEST_F(BoolArrays, GenericSpecialisedAndThreadCountsAgreeBitForBit) {
  MaskCase one;
  one.run(rt.kernel("masked_clip", spec()), 1);
  for (Mode mode : {Mode::specialised, Mode::generic})
    for (int threads : {1, 7}) {
      MaskCase other;
      other.run(rt.kernel("masked_clip", spec(), mode), threads);
      EXPECT_EQ(std::memcmp(other.y.data(), one.y.data(), one.y.size() * sizeof(double)), 0)
          << (mode == Mode::generic ? "generic" : "specialised") << ", " << threads << " threads";
      EXPECT_EQ(other.clipped_values(), one.clipped_values())
          << (mode == Mode::generic ? "generic" : "specialised") << ", " << threads << " threads";
    }
}

void expect_refused(const Kernel& k, const kiln_arg& a0, const kiln_arg& a1, const std::string& fragment) {
  std::vector<double> y(std::size_t(kCells) * kLevels);
  auto clipped = std::make_unique<bool[]>(y.size());
  try {
    k(a0, a1, f_array(y.data(), {kCells, kLevels}), f_array(clipped.get(), {kCells, kLevels}));
    FAIL() << "no error for: " << fragment;
  } catch (const ArgumentError& e) {
    EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();
  }
}

TEST_F(BoolArrays, OtherElementTypesAreRefusedForThemAndTheyForOthers) {
  const Kernel k = rt.kernel("masked_clip", spec());
  MaskCase c;
  std::vector<double> as_double(c.x.size());
  std::vector<std::int32_t> as_int(c.x.size());
  expect_refused(k, c.view(c.x.data()), c.view(as_double.data()),
                 "argument 1 'mask': expected a bool array of rank 2, got a double array of rank 2");
  expect_refused(k, c.view(c.x.data()), c.view(as_int.data()),
                 "argument 1 'mask': expected a bool array of rank 2, got an int32 array of rank 2");
  expect_refused(k, c.view(c.mask.get()), c.view(c.mask.get()),
                 "argument 0 'x': expected a double array of rank 2, got a bool array of rank 2");
}

// Two kernels that differ only in an array's element type never share a
// cache entry: the key takes the kernel's text, its declarations included.
TEST(BoolArrayKeys, AnArraysElementTypeIsInTheKey) {
  TempDir dir;
  std::string as_int(kMaskedClip);
  as_int.replace(as_int.find("array bool mask"), 15, "array int32 mask");
  Runtime with_bool(config_for(dir.path())), with_int(config_for(dir.path()));
  with_bool.register_kernel(kMaskedClip, "masked_clip.kiln");
  with_int.register_kernel(as_int, "masked_clip.kiln");
  EXPECT_NE(with_bool.kernel("masked_clip", spec()).key(), with_int.kernel("masked_clip", spec()).key());
  EXPECT_EQ(with_int.metrics().total().disk_hits, 0u);
}

// The GPU prelude takes bool arrays as the CPU's does: the same kernel
// compiles through NVRTC (CUBIN for sm_90) and hipRTC (gfx90a), no GPU
// needed; each skips where its compiler is not installed.
TEST_F(BoolArrays, CompileForGpus) {
  const GpuTarget targets[] = {{.arch = "sm_90"}, {.backend = GpuBackend::hip, .arch = "gfx90a"}};
  int compiled = 0;
  for (const GpuTarget& target : targets)
    for (Mode mode : {Mode::specialised, Mode::generic}) try {
        EXPECT_EQ(rt.precompile("masked_clip", spec(), target, mode).size(), 32u) << target.arch;
        ++compiled;
      } catch (const ToolchainError& e) {
        std::cerr << "no compiler for " << target.arch << " here: " << e.what() << "\n";
      }
  if (compiled == 0) GTEST_SKIP() << "neither NVRTC nor hipRTC here";
}

}  // namespace
}  // namespace kiln::testing
