// GPU temporaries (runtime/gpu/gpu_temporaries.hpp) on the w diffusion, whose
// nabla2 z_nabla2_c is a `#pragma kiln temporary` laid out as w_old: launched
// many times on one stream, a handle allocates it once; a second stream gets
// its own; larger arrays (the same spec: C order's strides do not hold the
// number of cells) grow it, smaller ones do not shrink it. Every result equals
// the CPU's.
#include "tests/api/gpu/gpu_support.hpp"
#include "tests/api/stencil_cases.hpp"

namespace kiln::testing {
namespace {

// A stream of the test's own, destroyed when it goes.
class Stream {
 public:
  Stream() { cuda_check(cudaStreamCreate(&stream_), "cudaStreamCreate"); }
  ~Stream() {
    (void)cudaStreamSynchronize(stream_);
    (void)cudaStreamDestroy(stream_);
  }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t get() const { return stream_; }

 private:
  cudaStream_t stream_ = nullptr;
};

// The temporaries allocated for `kernel`'s GPU builds (the CPU's count apart).
std::uint64_t gpu_allocations(const Runtime& rt, const std::string& kernel) {
  std::uint64_t n = 0;
  for (const auto& [name, m] : rt.metrics().kernels)
    if (name.rfind(kernel + " [cuda ", 0) == 0) n += m.temporary_allocations;
  return n;
}

class GpuTemporaries : public GpuTest {
 protected:
  const Grid small = Grid::torus(8, 6), large = Grid::torus(16, 12);
  const StencilUnderTest on_small = w_diffusion(small), on_large = w_diffusion(large);
  const std::int64_t nc = small.size(Entity::cell);
  // The small grid's whole domain: inside the large grid's arrays too.
  const Spec settings = w_settings(domain(0, nc, 0, kLevels), 2, 3, 0, nc);
  const std::string& name = on_small.kernel;

  // `a` after the CPU kernel (with the same spec as the GPU's).
  Arguments on_cpu(const Arguments& a) {
    Arguments done = a;
    done.run(cpu_kernel(rt, name, a.spec(settings)), 1);
    return done;
  }
  void expect_as_cpu(const std::string& what, const Arguments& gpu, const Arguments& cpu) {
    Difference d;
    for (const std::string& out : on_small.outputs) d.add(out, gpu.field(out), cpu.field(out));
    std::printf("[ gpu      ] %s: %s\n", what.c_str(), d.text().c_str());
    EXPECT_LE(d.max_relative, kGpuRtol) << what << ": " << d.text();
  }
  // Launches `k` `times` on `stream` with `device`'s arguments, then waits.
  static void launch(const GpuKernel& k, const DeviceArgs& device, cudaStream_t stream, int times) {
    for (int i = 0; i < times; ++i) k.launch(stream == cudaStreamPerThread ? nullptr : stream, device.args());
    cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize");
  }
};

TEST_F(GpuTemporaries, OneSetPerStreamAllocatedOnceAndGrownWithTheArrays) {
  const Arguments small_args = on_small.make(Layout::c()), large_args = on_large.make(Layout::c());
  ASSERT_EQ(small_args.spec(settings).canonical(), large_args.spec(settings).canonical());
  const Arguments small_cpu = on_cpu(small_args), large_cpu = on_cpu(large_args);
  const GpuKernel k = gpu_kernel(rt, name, small_args.spec(settings));
  if (preparing()) return;
  Arguments small_gpu = small_args, large_gpu = large_args;
  const DeviceArgs small_device(small_gpu.views()), large_device(large_gpu.views());
  launch(k, small_device, cudaStreamPerThread, 20);
  EXPECT_EQ(gpu_allocations(rt, name), 1u) << "20 launches on one stream";
  small_device.copy_back();
  expect_as_cpu("20 launches on the calling thread's stream", small_gpu, small_cpu);
  {
    const Stream second;
    launch(k, small_device, second.get(), 5);
    EXPECT_EQ(gpu_allocations(rt, name), 2u) << "a second stream: its own temporary";
    small_device.copy_back();
    expect_as_cpu("5 launches on a second stream", small_gpu, small_cpu);
    launch(k, small_device, cudaStreamPerThread, 3);
    launch(k, small_device, second.get(), 3);
    EXPECT_EQ(gpu_allocations(rt, name), 2u) << "both streams again: nothing new";
  }
  launch(k, large_device, cudaStreamPerThread, 4);
  EXPECT_EQ(gpu_allocations(rt, name), 3u) << "larger arrays: the stream's temporary grows";
  large_device.copy_back();
  expect_as_cpu("4 launches on larger arrays", large_gpu, large_cpu);
  launch(k, small_device, cudaStreamPerThread, 2);
  EXPECT_EQ(gpu_allocations(rt, name), 3u) << "smaller arrays again: no new allocation";
  small_device.copy_back();
  expect_as_cpu("the smaller arrays after the larger", small_gpu, small_cpu);
}

}  // namespace
}  // namespace kiln::testing
