// gpu_check: every kernel of the granule on an NVIDIA GPU, against the same
// kernel on the CPU, then launch overhead and bandwidth. Needs a GPU and its
// driver; scripts/gpu_check.sh builds and runs it in one command.
//
//   gpu_check [--nx N] [--ny N] [--levels K] [--repeats R]
//
// Two granules with the same seed; stage by stage, one runs on the CPU, the
// other's arrays go to the device, the stage runs there (kiln's GpuKernel),
// and comes back; then every field is compared (relative 1e-12: fused
// multiply-adds may differ in the last bits). Timings per stage: the host
// time to queue one launch through kiln and through a raw
// cuLaunchCooperativeKernel of the same function, the kernel time (events
// over R launches) and its bandwidth (the stage's bytes) against a
// device-to-device copy. Exit status 1 when any stage differs.
#include <cuda.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace {

void cuda_check(cudaError_t status, const char* what) {
  if (status != cudaSuccess) throw std::runtime_error(std::string(what) + ": " + cudaGetErrorString(status));
}

// The arguments a stage passes, caught by a stand-in entry: the granule's
// stage lambdas stay the only place that knows each kernel's argument list.
thread_local std::vector<kiln_arg> recorded;
thread_local std::size_t recorded_count = 0;
int record(const kiln_arg* const* args, const kiln_value*, const kiln_context*) {
  recorded.clear();
  for (std::size_t i = 0; i < recorded_count; ++i) recorded.push_back(*args[i]);
  return 0;
}

std::vector<kiln_arg> arguments_of(kiln::Runtime& rt, const kiln::granule::Stage& stage) {
  std::vector<std::uint64_t> signature;
  for (const auto& a : rt.declaration(stage.kernel).arguments)
    signature.push_back(kiln::detail::signature_of(static_cast<std::int32_t>(a.type), a.rank));
  const kiln::detail::CallBlock block{.entry = record, .params = nullptr, .signature = signature.data(),
                                      .count = signature.size(), .out_of_line = false, .threads = 1, .owner = nullptr};
  recorded_count = signature.size();
  stage.call(kiln::Kernel(&block));
  return recorded;
}

std::size_t element_size(const kiln_arg& a) {
  const auto type = static_cast<kiln::ElementType>(a.type);
  return type == kiln::ElementType::i32 || type == kiln::ElementType::f32 ? 4 : type == kiln::ElementType::boolean ? 1 : 8;
}

// Bytes from the first element to one past the last, whatever the strides.
std::size_t extent_bytes(const kiln_arg& a) {
  std::int64_t last = 0;
  for (int d = 0; d < a.rank; ++d) last += (a.shape[d] - 1) * a.strides[d];
  return static_cast<std::size_t>(last + 1) * element_size(a);
}

// Device copies of a stage's arrays (scalars pass as they are).
struct DeviceArgs {
  std::vector<kiln_arg> host, device;
  explicit DeviceArgs(std::vector<kiln_arg> args) : host(std::move(args)), device(host) {
    for (kiln_arg& a : device) {
      if (a.rank == 0) continue;
      cuda_check(cudaMalloc(&a.data, extent_bytes(a)), "cudaMalloc");
      cuda_check(cudaMemcpy(a.data, host[&a - device.data()].data, extent_bytes(a), cudaMemcpyHostToDevice), "to device");
    }
  }
  void copy_back() {
    for (std::size_t i = 0; i < device.size(); ++i)
      if (device[i].rank > 0)
        cuda_check(cudaMemcpy(host[i].data, device[i].data, extent_bytes(device[i]), cudaMemcpyDeviceToHost), "back");
  }
  ~DeviceArgs() {
    for (kiln_arg& a : device)
      if (a.rank > 0) cudaFree(a.data);
  }
};

double device_copy_gbs(std::size_t bytes) {
  void *src = nullptr, *dst = nullptr;
  cuda_check(cudaMalloc(&src, bytes), "cudaMalloc");
  cuda_check(cudaMalloc(&dst, bytes), "cudaMalloc");
  cudaEvent_t start, stop;
  cudaEventCreate(&start);
  cudaEventCreate(&stop);
  cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(start);
  for (int i = 0; i < 20; ++i) cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice);
  cudaEventRecord(stop);
  cudaEventSynchronize(stop);
  float ms = 0;
  cudaEventElapsedTime(&ms, start, stop);
  cudaFree(src);
  cudaFree(dst);
  return 2.0 * bytes * 20 / (ms * 1e6);  // read + write
}

}  // namespace

int main(int argc, char** argv) {
  std::int64_t nx = 128, ny = 80, levels = 80;
  int repeats = 50;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--nx") nx = std::atoll(argv[i + 1]);
    else if (a == "--ny") ny = std::atoll(argv[i + 1]);
    else if (a == "--levels") levels = std::atoll(argv[i + 1]);
    else if (a == "--repeats") repeats = std::atoi(argv[i + 1]);
  }
  try {
    using namespace kiln;
    Runtime rt;
    const granule::Grid grid = granule::Grid::limited_area(nx, ny);
    granule::Granule on_cpu(grid, levels, granule::Layout::fortran), on_gpu(grid, levels, granule::Layout::fortran);
    cudaDeviceProp prop{};
    cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
    std::printf("gpu_check: %s, limited-area grid %lld x %lld, %lld levels, Fortran order\n", prop.name,
                static_cast<long long>(nx), static_cast<long long>(ny), static_cast<long long>(levels));
    std::printf("%-72s %6s %9s %9s %9s %9s %9s\n", "stage", "arch", "max|diff|", "kiln us", "raw us", "kernel ms",
                "GB/s");
    const double copy_gbs = device_copy_gbs(std::size_t(256) << 20);
    int failures = 0;
    for (std::size_t s = 0; s < on_gpu.stages().size(); ++s) {
      const granule::Stage& stage = on_gpu.stages()[s];
      DeviceArgs args(arguments_of(rt, stage));
      const GpuKernel k = rt.gpu_kernel(stage.kernel, stage.spec);
      k.launch(nullptr, args.device);
      cuda_check(cudaStreamSynchronize(cudaStreamPerThread), "the kernel");
      args.copy_back();
      on_cpu.stages()[s].call(rt.kernel(stage.kernel, stage.spec));
      // Relative 1e-12 of the largest values (theta_v, ~320): fused multiply-adds differ in the last bits.
      const double diff = granule::Granule::max_difference(on_cpu, on_gpu);
      if (!(diff <= 1e-12 * 320)) ++failures;

      // Host time to queue a launch: kiln's, then the driver's own on the same function.
      auto t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r) k.launch(nullptr, args.device);
      const double kiln_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / repeats;
      cudaStreamSynchronize(cudaStreamPerThread);
      CUmodule module;
      CUfunction function;
      // The CUBIN the Runtime stored, read back (read-only: nothing is removed).
      const std::vector<char> image =
          Cache(rt.config().cache_dir, {.index_path = "off", .read_only = true}).read(k.key()).value().payload;
      cuModuleLoadData(&module, image.data());
      cuModuleGetFunction(&function, module, ("kiln_" + k.key()).c_str());
      std::vector<kiln_arg> by_value = args.device;
      // Specialised builds read no parameter block: zeros serve the raw launch.
      std::vector<kiln_value> params(std::max<std::size_t>(1, rt.declaration(stage.kernel).parameters.size()));
      void* raw_params[] = {by_value.data(), params.data()};
      t0 = std::chrono::steady_clock::now();
      for (int r = 0; r < repeats; ++r)
        cuLaunchCooperativeKernel(function, k.grid(), 1, 1, k.block(), 1, 1, 0, CU_STREAM_PER_THREAD, raw_params);
      const double raw_us = std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count() / repeats;
      cudaStreamSynchronize(cudaStreamPerThread);

      cudaEvent_t start, stop;
      cudaEventCreate(&start);
      cudaEventCreate(&stop);
      cudaEventRecord(start, cudaStreamPerThread);
      for (int r = 0; r < repeats; ++r) k.launch(nullptr, args.device);
      cudaEventRecord(stop, cudaStreamPerThread);
      cudaEventSynchronize(stop);
      float ms = 0;
      cudaEventElapsedTime(&ms, start, stop);
      const double kernel_ms = ms / repeats;
      std::printf("%-72s %6s %9.2e %9.2f %9.2f %9.3f %9.1f\n", stage.kernel.c_str(), k.arch().c_str(), diff, kiln_us,
                  raw_us, kernel_ms, stage.bytes / (kernel_ms * 1e6));
      cuModuleUnload(module);
      // The timing runs changed the device copies only; the next stage starts from the host fields.
    }
    std::printf("device-to-device copy: %.1f GB/s\n%s\n", copy_gbs,
                failures ? "FAILED: some stages differ from the CPU" : "all stages match the CPU");
    return failures ? 1 : 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_check: %s\n", e.what());
    return 2;
  }
}
