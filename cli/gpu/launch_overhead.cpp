// Check 4: the host time to queue one launch. kiln's GpuKernel::launch (its
// argument checks, then a cooperative launch) against the driver's own
// cuLaunchKernel and cuLaunchCooperativeKernel of the same function, loaded
// from the same cached bytes, with the same arguments and parameter block.
// Each batch queues `launches` launches between two synchronisations (so the
// queue never fills and blocks the host); the median over the batches is
// taken, the three methods' batches interleaved so that drift hits each alike.
// A kernel with temporaries is launched by kiln only: kiln appends them, a
// raw launch of it would pass none.
#include <chrono>
#include <cstdio>
#include <functional>

#include "cli/gpu/cached_image.hpp"
#include "cli/gpu/checks.hpp"
#include "cli/gpu/stage_args.hpp"

namespace kiln::gpu_check {
namespace {

using Clock = std::chrono::steady_clock;

std::uint64_t temporary_allocations(Runtime& rt, const GpuKernel& k) {
  const MetricsSnapshot m = rt.metrics();
  const auto it = m.kernels.find(k.name() + " [cuda " + k.arch() + "]");
  return it == m.kernels.end() ? 0 : it->second.temporary_allocations;
}

// Microseconds per launch of one batch of `n` calls of `launch`, between synchronisations.
double batch_us(int n, const std::function<void()>& launch) {
  synchronize("before a batch");
  const auto start = Clock::now();
  for (int i = 0; i < n; ++i) launch();
  const double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / n;
  synchronize("a batch of launches");
  return us;
}

nlohmann::ordered_json time_stage(Context& ctx, const granule::Stage& stage) {
  const Options& o = ctx.options;
  const DeviceArgs args(arguments_of(ctx.rt, stage));
  const GpuKernel k = ctx.rt.gpu_kernel(stage.kernel, stage.spec, kTimedCase.mode);
  const auto kiln = [&] { k.launch(nullptr, args.device()); };
  kiln();
  synchronize(stage.kernel + " on the GPU");
  std::vector<double> kiln_us, raw_us, cooperative_us;
  nlohmann::ordered_json row = {{"kernel", stage.kernel}, {"grid_blocks", k.grid()}, {"block_threads", k.block()}};
  if (const std::uint64_t before = temporary_allocations(ctx.rt, k); before > 0) {
    for (int b = 0; b < o.batches; ++b) kiln_us.push_back(batch_us(o.launches, kiln));
    row["kiln_us"] = median(kiln_us);
    row["raw"] = "not launched raw: kiln appends the kernel's temporaries, a raw launch would pass none";
    // Allocated once per stream and size, then reused: the batches should allocate none.
    row["temporary_allocations_in_batches"] = temporary_allocations(ctx.rt, k) - before;
    row["launches"] = o.batches * o.launches;
    return row;
  }
  const Driver& driver = Driver::get();
  const Module module(cached_image(ctx.rt.config(), k.key()), entry_symbol(k.key()));
  std::vector<kiln_arg> by_value = args.device();
  std::vector<kiln_value> block(k.parameters().begin(), k.parameters().end());
  void* params[] = {by_value.data(), block.data()};
  const auto g = static_cast<unsigned>(k.grid()), t = static_cast<unsigned>(k.block());
  const auto raw = [&] {
    driver.check(driver.launch_kernel(module.function(), g, 1, 1, t, 1, 1, 0, CU_STREAM_PER_THREAD, params, nullptr),
                 "cuLaunchKernel");
  };
  const auto cooperative = [&] {
    driver.check(driver.launch_cooperative_kernel(module.function(), g, 1, 1, t, 1, 1, 0, CU_STREAM_PER_THREAD, params),
                 "cuLaunchCooperativeKernel");
  };
  raw();
  cooperative();
  synchronize(stage.kernel + " launched raw");
  for (int b = 0; b < o.batches; ++b) {
    kiln_us.push_back(batch_us(o.launches, kiln));
    raw_us.push_back(batch_us(o.launches, raw));
    cooperative_us.push_back(batch_us(o.launches, cooperative));
  }
  row.update({{"kiln_us", median(kiln_us)},
              {"raw_launch_us", median(raw_us)},
              {"raw_cooperative_us", median(cooperative_us)},
              {"kiln_minus_raw_launch_us", median(kiln_us) - median(raw_us)},
              {"kiln_minus_raw_cooperative_us", median(kiln_us) - median(cooperative_us)}});
  return row;
}

}  // namespace

void check_launch_overhead(Context& ctx) {
  const Options& o = ctx.options;
  nlohmann::ordered_json& section = ctx.report.doc["launch"];
  section.update({{"case", kTimedCase.name()},
                  {"launches_per_batch", o.launches},
                  {"batches", o.batches},
                  {"target_kiln_minus_raw_us", 0.3}});
  std::printf("\n4. launch overhead: host time to queue one launch, median of %d batches of %d (%s, check grid)\n",
              o.batches, o.launches, kTimedCase.name().c_str());
  std::printf("%-72s %9s %9s %9s %12s %12s\n", "stage", "kiln us", "raw us", "coop us", "kiln-raw us", "kiln-coop us");
  section["stages"] = nlohmann::ordered_json::array();
  granule::Granule granule(ctx.grid, o.levels, kTimedCase.layout);
  for (const granule::Stage& stage : granule.stages()) {
    try {
      nlohmann::ordered_json row = time_stage(ctx, stage);
      if (row.contains("raw_launch_us"))
        std::printf("%-72s %9.3f %9.3f %9.3f %+12.3f %+12.3f\n", stage.kernel.c_str(), row["kiln_us"].get<double>(),
                    row["raw_launch_us"].get<double>(), row["raw_cooperative_us"].get<double>(),
                    row["kiln_minus_raw_launch_us"].get<double>(), row["kiln_minus_raw_cooperative_us"].get<double>());
      else
        std::printf("%-72s %9.3f   (temporaries: %llu allocations over %lld launches; not launched raw)\n",
                    stage.kernel.c_str(), row["kiln_us"].get<double>(),
                    static_cast<unsigned long long>(row["temporary_allocations_in_batches"].get<std::uint64_t>()),
                    static_cast<long long>(row["launches"].get<std::int64_t>()));
      section["stages"].push_back(std::move(row));
    } catch (const std::exception& e) {
      if (device_hung()) throw;  // nothing more can run: the check stops here
      ctx.report.error("launch overhead: " + stage.kernel, e.what());
      section["stages"].push_back({{"kernel", stage.kernel}, {"error", e.what()}});
    }
  }
}

}  // namespace kiln::gpu_check
