// The device and the software the figures were measured with.
#include <cstdio>

#include "cli/gpu/checks.hpp"
#include "cli/gpu/cuda_calls.hpp"

namespace kiln::gpu_check {
namespace {

std::string version_text(int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); }

}  // namespace

void check_device(Context& ctx) {
  nlohmann::ordered_json& device = ctx.report.doc["device"];
  cudaDeviceProp prop{};
  cuda_check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  int driver = 0, runtime = 0;
  cuda_check(cudaDriverGetVersion(&driver), "cudaDriverGetVersion");
  cuda_check(cudaRuntimeGetVersion(&runtime), "cudaRuntimeGetVersion");
  const VersionInfo kiln_version = version();
  device = {{"name", prop.name},
            {"compute_capability", "sm_" + std::to_string(prop.major * 10 + prop.minor)},
            {"multiprocessors", prop.multiProcessorCount},
            {"l2_bytes", prop.l2CacheSize},
            {"memory_bytes", prop.totalGlobalMem},
            {"cooperative_launch", prop.cooperativeLaunch != 0},
            {"driver_version", version_text(driver)},
            {"runtime_version", version_text(runtime)},
            {"kiln", kiln_version.kiln},
            {"nvrtc", kiln_version.nvrtc}};
  const auto& g = ctx.report.doc["grids"]["check"] =
      describe(ctx.grid, ctx.options.nx, ctx.options.ny, ctx.options.levels);
  std::printf("device: %s (sm_%d%d, %d SMs, L2 %.0f MB, %.1f GiB), driver %s, CUDA runtime %s\n", prop.name, prop.major,
              prop.minor, prop.multiProcessorCount, prop.l2CacheSize / 1e6,
              static_cast<double>(prop.totalGlobalMem) / (1 << 30), version_text(driver).c_str(),
              version_text(runtime).c_str());
  std::printf("kiln %s, NVRTC %s\n", kiln_version.kiln.c_str(), kiln_version.nvrtc.c_str());
  std::printf("check grid: limited area %lld x %lld, %lld levels (%lld cells, %lld edges, %lld vertices)\n",
              static_cast<long long>(ctx.options.nx), static_cast<long long>(ctx.options.ny),
              static_cast<long long>(ctx.options.levels), g["cells"].get<long long>(), g["edges"].get<long long>(),
              g["vertices"].get<long long>());
}

std::string no_gpu_reason() {
  int count = 0;
  const cudaError_t status = cudaGetDeviceCount(&count);
  if (status != cudaSuccess)
    return std::string("no usable CUDA device (cudaGetDeviceCount: ") + cudaGetErrorName(status) + ": " +
           cudaGetErrorString(status) + ")";
  if (count == 0) return "no CUDA device";
  return {};
}

}  // namespace kiln::gpu_check
