// What kiln_gpu_tests share: whether this machine runs GPU kernels, device
// copies of a call's arguments, and the fixture every test derives from.
//
// Three ways a test runs (decided once per process, printed by each test):
// - run: a CUDA driver loads and a device is there. The test launches.
// - prepare: no GPU, and KILN_GPU_PREPARE names an architecture (sm_90). The
//   test does everything but launching: it runs its CPU kernels (so that they
//   land in the cache) and compiles each GPU kernel it would launch into the
//   cache for that architecture (Runtime::precompile), with the very specs a
//   GPU run uses, so that a GPU machine without a compiler is served from it.
// - skip: neither; each test skips and says why.
//
// Linked to CUDA's runtime (cudart) alone, never to the driver library: the
// binary starts where no driver is installed, and cudart reports that.
#pragma once

#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "tests/api/stencil_harness.hpp"
#include "tests/api/test_support.hpp"

namespace kiln::testing {

struct GpuMachine {
  enum class Way { run, prepare, skip } way = Way::skip;
  std::string arch;  // prepare: KILN_GPU_PREPARE
  std::string why;   // prepare, skip: why nothing launches here
};

// Why no GPU kernel can run here, or "" where one can.
inline std::string no_gpu_here() {
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL)) {
    ::dlclose(driver);
  } else {
    const char* error = ::dlerror();
    return std::string("no CUDA driver: libcuda.so.1 does not load (") + (error ? error : "?") + ")";
  }
  int count = 0;
  if (const cudaError_t e = cudaGetDeviceCount(&count); e != cudaSuccess)
    return std::string("cudaGetDeviceCount: ") + cudaGetErrorName(e) + ": " + cudaGetErrorString(e);
  return count > 0 ? std::string() : std::string("cudaGetDeviceCount: no CUDA device");
}

inline const GpuMachine& gpu_machine() {
  static const GpuMachine machine = [] {
    const std::string why = no_gpu_here();
    if (why.empty()) return GpuMachine{GpuMachine::Way::run, "", ""};
    const char* arch = std::getenv("KILN_GPU_PREPARE");
    if (arch && *arch) return GpuMachine{GpuMachine::Way::prepare, arch, why};
    return GpuMachine{GpuMachine::Way::skip, "", why + "; KILN_GPU_PREPARE=sm_90 fills a cache for a GPU machine"};
  }();
  return machine;
}

// The Runtime's settings: the environment's (KILN_CACHE_DIR, KILN_TARGET_CPU,
// KILN_COMPILER_MODULE, ...) when KILN_CACHE_DIR is set, so that a GPU
// machine reads the shipped cache; else a fresh folder, as RuntimeTest's.
inline Config gpu_test_config(const std::filesystem::path& fallback) {
  if (std::getenv("KILN_CACHE_DIR")) return Config::from_env();
  return config_for(fallback);
}

// A CUDA call's failure as an exception naming the call: the test that made
// it reports it and goes on with its other cases.
inline void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(e) + ": " + cudaGetErrorString(e));
}

struct CudaFree {
  void operator()(void* p) const { (void)cudaFree(p); }
};
using DeviceBuffer = std::unique_ptr<void, CudaFree>;

// Device copies of a call's arguments (Arguments::views()): each array's
// extent allocated and copied to the device, scalars as they are. The views
// keep the host's shapes and strides, so args() is the same call on the GPU.
class DeviceArgs {
 public:
  explicit DeviceArgs(std::span<const kiln_arg> host) : host_(host.begin(), host.end()), device_(host_) {
    for (kiln_arg& a : device_) {
      if (a.rank == 0) continue;
      const std::size_t bytes = extent_bytes(a);
      void* p = nullptr;
      cuda_check(cudaMalloc(&p, std::max<std::size_t>(bytes, 1)), "cudaMalloc");
      buffers_.emplace_back(p);
      cuda_check(cudaMemcpy(p, a.data, bytes, cudaMemcpyHostToDevice), "cudaMemcpy to the device");
      a.data = p;
    }
    // Copies from pageable memory may still be in flight when cudaMemcpy
    // returns; no launch on any stream may start before they land.
    cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after the copies");
  }
  const std::vector<kiln_arg>& args() const { return device_; }
  // Every array back into the host memory the views point to.
  void copy_back() const {
    for (std::size_t i = 0; i < device_.size(); ++i)
      if (device_[i].rank > 0)
        cuda_check(cudaMemcpy(host_[i].data, device_[i].data, extent_bytes(device_[i]), cudaMemcpyDeviceToHost),
                   "cudaMemcpy to the host");
  }

 private:
  std::vector<kiln_arg> host_, device_;
  std::vector<DeviceBuffer> buffers_;
};

// Launches `k` on `stream` with `a`'s arguments copied to the device, waits,
// and copies every array back into `a`.
inline void run_on_gpu(const GpuKernel& k, Arguments& a, cudaStream_t stream = cudaStreamPerThread) {
  const DeviceArgs device(a.views());
  k.launch(stream == cudaStreamPerThread ? nullptr : stream, device.args());
  cuda_check(cudaStreamSynchronize(stream), "cudaStreamSynchronize after the launch");
  device.copy_back();
}

// How a GPU output differs from the CPU's: bit-identical, or the largest
// relative difference (infinite where one is NaN). Relative to the CPU's
// value, but never to less than the field's largest magnitude times 1e-3: a
// multiply-add fused on one side only leaves a residue of the operands' size
// where the exact result cancels to (nearly) 0, which no relative bound on
// that value alone would accept.
struct Difference {
  bool identical = true;
  double max_relative = 0.0;
  std::string where;

  static double largest_magnitude(const Field& f) {
    double largest = 0.0;
    for (std::int64_t h = 0; h < f.rows; ++h)
      for (std::int64_t k = 0; k < f.width(); ++k)
        if (std::isfinite(f(h, k))) largest = std::max(largest, std::fabs(f(h, k)));
    return largest;
  }

  void add(const std::string& name, const Field& gpu, const Field& cpu) {
    const double floor = largest_magnitude(cpu) * 1e-3;
    for (std::int64_t h = 0; h < gpu.rows; ++h)
      for (std::int64_t k = 0; k < gpu.width(); ++k) {
        const double g = gpu(h, k), c = cpu(h, k);
        if (same_bits(g, c)) continue;
        identical = false;
        const double scale = std::max(std::fabs(c), floor);
        const double relative = std::isfinite(g) && std::isfinite(c) && scale > 0.0
                                    ? std::fabs(g - c) / scale
                                    : std::numeric_limits<double>::infinity();
        if (relative > max_relative || where.empty()) {
          max_relative = relative;
          char values[96];
          std::snprintf(values, sizeof values, ": GPU %.17g, CPU %.17g", g, c);
          where = name + "[" + std::to_string(h) + "][" + std::to_string(k) + "]" + values;
        }
      }
  }
  std::string text() const {
    if (identical) return "identical";
    char buffer[64];
    std::snprintf(buffer, sizeof buffer, "max relative difference %.3g", max_relative);
    return buffer + (" at " + where);
  }
};

// Above this a GPU result differs from the CPU's by more than fused
// multiply-adds placed elsewhere can explain.
inline constexpr double kGpuRtol = 1e-12;

// Every test's fixture: the Runtime, the way this machine runs the test, and
// what it resolved, printed at the end (on a GPU machine: whether anything
// had to be compiled there).
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (gpu_machine().way == GpuMachine::Way::skip) GTEST_SKIP() << gpu_machine().why;
    if (preparing())
      std::printf("[ prepare  ] no GPU here (%s): preparing for %s\n", gpu_machine().why.c_str(),
                  gpu_machine().arch.c_str());
    else
      std::printf("[ device   ] %s\n", device_name().c_str());
  }
  // Device 0, which kiln's gpu_kernel() takes by default: its name and compute capability.
  static std::string device_name() {
    cudaDeviceProp p{};
    if (const cudaError_t e = cudaGetDeviceProperties(&p, 0); e != cudaSuccess) return cudaGetErrorString(e);
    return std::string(p.name) + " (sm_" + std::to_string(p.major * 10 + p.minor) + ")";
  }
  void TearDown() override {
    if (gpu_machine().way != GpuMachine::Way::skip && !rt.metrics().kernels.empty()) report(rt);
  }
  // What `r` resolved and where from: on a GPU machine, whether anything had
  // to be compiled there.
  void report(const Runtime& r) const {
    std::uint64_t cpu_compiles = 0, gpu_compiles = 0, hits = 0;
    for (const auto& [name, m] : r.metrics().kernels) {
      (name.find(" [cuda ") != std::string::npos ? gpu_compiles : cpu_compiles) += m.compiles;
      hits += m.disk_hits;
    }
    const std::string gpu_way = preparing() ? "compiled into the cache for " + gpu_machine().arch : "loaded";
    std::printf("[ kernels  ] %d CPU kernels run, %d GPU kernels %s; compiled here: %llu CPU, %llu GPU; %llu from "
                "the disk cache (%s)\n",
                cpu_kernels, gpu_kernels, gpu_way.c_str(), (unsigned long long)cpu_compiles,
                (unsigned long long)gpu_compiles, (unsigned long long)hits, r.config().cache_dir.c_str());
  }
  static bool preparing() { return gpu_machine().way == GpuMachine::Way::prepare; }

  // The CPU kernel, counted.
  Kernel cpu_kernel(Runtime& r, std::string_view name, const Spec& spec, Mode mode = Mode::specialised) {
    ++cpu_kernels;
    return r.kernel(name, spec, mode);
  }
  // The GPU kernel loaded; or, preparing, compiled into the cache for the
  // architecture a GPU machine will ask for (then an empty handle).
  GpuKernel gpu_kernel(Runtime& r, std::string_view name, const Spec& spec, Mode mode = Mode::specialised) {
    ++gpu_kernels;
    if (!preparing()) return r.gpu_kernel(name, spec, mode);
    r.precompile(name, spec, {.backend = GpuBackend::cuda, .arch = gpu_machine().arch}, mode);
    return {};
  }

  TempDir dir;
  Runtime rt{gpu_test_config(dir.path())};
  int cpu_kernels = 0, gpu_kernels = 0;
};

}  // namespace kiln::testing
