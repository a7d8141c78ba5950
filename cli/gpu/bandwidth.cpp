// Check 2: each stage's kernel time on the bandwidth grid (arrays of about a
// gigabyte, far beyond the L2), CUDA events over `repeats` launches, as
// bandwidth (Stage::bytes: what the stage must move at least) against a
// device-to-device copy measured in the same run. The point-wise stages (no
// neighbour table: nothing read but their own points) are the ones that
// should come near the copy.
#include <cstdio>

#include "cli/gpu/checks.hpp"
#include "cli/gpu/stage_args.hpp"

namespace kiln::gpu_check {
namespace {

// GB/s of a device-to-device copy of `bytes` (each byte read and written).
double copy_gbs(std::size_t bytes, int repeats) {
  const DeviceBuffer from(bytes), to(bytes);
  cuda_check(cudaMemset(from.data(), 1, bytes), "cudaMemset");
  cuda_check(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, cudaStreamPerThread),
             "cudaMemcpyAsync");  // warm-up
  EventTimer timer;
  timer.start();
  for (int r = 0; r < repeats; ++r)
    cuda_check(cudaMemcpyAsync(to.data(), from.data(), bytes, cudaMemcpyDeviceToDevice, cudaStreamPerThread),
               "cudaMemcpyAsync");
  timer.stop();
  return 2.0 * static_cast<double>(bytes) * repeats / (timer.elapsed_ms() * 1e6);
}

// No int32 array among the arguments: no neighbour table.
bool reads_no_table(const KernelDeclaration& decl) {
  for (const KernelArgument& a : decl.arguments)
    if (a.type == ElementType::i32 && a.rank > 0) return false;
  return true;
}

nlohmann::ordered_json time_stage(Context& ctx, const granule::Stage& stage, double copy) {
  const DeviceArgs args(arguments_of(ctx.rt, stage));
  const GpuKernel k = ctx.rt.gpu_kernel(stage.kernel, stage.spec, kTimedCase.mode);
  ctx.note_resolved(stage, kTimedCase.mode, k);
  k.launch(nullptr, args.device());  // warm-up: the module's first launch
  synchronize(stage.kernel + " on the GPU");
  EventTimer timer;
  timer.start();
  for (int r = 0; r < ctx.options.repeats; ++r) k.launch(nullptr, args.device());
  timer.stop();
  const double ms = timer.elapsed_ms() / ctx.options.repeats;
  const double gbs = stage.bytes / (ms * 1e6);
  return {{"kernel", stage.kernel},  {"neighbour_tables", !reads_no_table(ctx.rt.declaration(stage.kernel))},
          {"bytes", stage.bytes},    {"kernel_ms", ms},
          {"gb_per_s", gbs},         {"percent_of_copy", 100.0 * gbs / copy},
          {"grid_blocks", k.grid()}, {"block_threads", k.block()}};
}

}  // namespace

void check_bandwidth(Context& ctx) {
  const Options& o = ctx.options;
  nlohmann::ordered_json& section = ctx.report.doc["bandwidth"];
  const granule::Grid& grid = ctx.bandwidth_grid();
  ctx.report.doc["grids"]["bandwidth"] = describe(grid, o.bw_nx, o.bw_ny, o.bw_levels);
  std::printf("\n2. bandwidth: %s, limited area %lld x %lld, %lld levels (%lld cells), %d launches each\n",
              kTimedCase.name().c_str(), static_cast<long long>(o.bw_nx), static_cast<long long>(o.bw_ny),
              static_cast<long long>(o.bw_levels), static_cast<long long>(grid.size(granule::Entity::cell)), o.repeats);
  const std::size_t copy_bytes = static_cast<std::size_t>(o.copy_mib) << 20;
  const double copy = copy_gbs(copy_bytes, o.repeats);
  section["copy"] = {{"bytes", copy_bytes}, {"repeats", o.repeats}, {"gb_per_s", copy}};
  std::printf("device-to-device copy of %llu MiB: %.1f GB/s (read + write)\n",
              static_cast<unsigned long long>(o.copy_mib), copy);
  std::printf("%-72s %6s %9s %10s %9s %7s\n", "stage", "tables", "GB moved", "kernel ms", "GB/s", "% copy");
  section["stages"] = nlohmann::ordered_json::array();
  granule::Granule granule(grid, o.bw_levels, kTimedCase.layout);
  for (const granule::Stage& stage : granule.stages()) {
    try {
      nlohmann::ordered_json row = time_stage(ctx, stage, copy);
      std::printf("%-72s %6s %9.2f %10.3f %9.1f %6.1f%%\n", stage.kernel.c_str(),
                  row["neighbour_tables"].get<bool>() ? "yes" : "no", stage.bytes / 1e9, row["kernel_ms"].get<double>(),
                  row["gb_per_s"].get<double>(), row["percent_of_copy"].get<double>());
      section["stages"].push_back(std::move(row));
    } catch (const std::exception& e) {
      if (device_hung()) throw;  // nothing more can run: the check stops here
      ctx.report.error("bandwidth: " + stage.kernel, e.what());
      section["stages"].push_back({{"kernel", stage.kernel}, {"error", e.what()}});
    }
  }
  section["target_percent_point_wise"] = 80;
}

}  // namespace kiln::gpu_check
