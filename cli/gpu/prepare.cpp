// --prepare ARCH: what a GPU run needs from a compiler, done where there is
// one and no GPU, so that the GPU machine compiles nothing. The correctness
// check's CPU kernels (resolved together, then each stage called as the GPU
// run calls it), and every GPU kernel the checks resolve, compiled for ARCH:
// the correctness cases' on the check grid, with each of its Runtimes'
// contraction (the launch check's are among them), and the bandwidth stages'
// on the bandwidth grid. The same sizes as a GPU run with the same options:
// a specialised key holds them.
#include <chrono>
#include <cstdio>

#include "cli/gpu/checks.hpp"

namespace kiln::gpu_check {
namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

void precompile_stages(Runtime& rt, const granule::Granule& granule, const Case& c, const std::string& arch,
                       const std::string& grid, nlohmann::ordered_json& out) {
  for (const granule::Stage& stage : granule.stages()) {
    const auto start = Clock::now();
    const std::string key = rt.precompile(stage.kernel, stage.spec, GpuTarget{.arch = arch}, c.mode);
    const double s = seconds_since(start);
    std::printf("  gpu %-10s %-72s %s  %.2f s\n", arch.c_str(), stage.kernel.c_str(), key.c_str(), s);
    out.push_back({{"kernel", stage.kernel},
                   {"case", c.name()},
                   {"fp_contract", rt.config().fp_contract},
                   {"grid", grid},
                   {"target", arch},
                   {"key", key},
                   {"seconds", s}});
  }
}

void prepare_cpu(Runtime& rt, granule::Granule& granule, const Case& c, nlohmann::ordered_json& out) {
  std::vector<KernelRequest> requests;
  for (const granule::Stage& stage : granule.stages()) requests.push_back({stage.kernel, stage.spec, c.mode});
  const auto start = Clock::now();
  const std::vector<Kernel> kernels = rt.kernels(requests);
  // Called as the GPU run calls them: each a memory hit now.
  for (const granule::Stage& stage : granule.stages()) stage.call(rt.kernel(stage.kernel, stage.spec, c.mode));
  for (std::size_t i = 0; i < kernels.size(); ++i) {
    std::printf("  cpu %-10s %-72s %s\n", rt.config().target_cpu.c_str(), requests[i].name.c_str(),
                kernels[i].key().c_str());
    out.push_back({{"kernel", requests[i].name},
                   {"case", c.name()},
                   {"fp_contract", rt.config().fp_contract},
                   {"grid", "check"},
                   {"target", rt.config().target_cpu},
                   {"key", kernels[i].key()}});
  }
  std::printf("  (the CPU kernels in %.2f s)\n", seconds_since(start));
}

}  // namespace

void prepare(Context& ctx, const std::string& arch) {
  const Options& o = ctx.options;
  nlohmann::ordered_json& section = ctx.report.doc["prepared"];
  section = {{"arch", arch},
             {"cache_dir", ctx.rt.config().cache_dir.string()},
             {"target_cpu", ctx.rt.config().target_cpu},
             {"kernels", nlohmann::ordered_json::array()}};
  ctx.report.doc["grids"]["check"] = describe(ctx.grid, o.nx, o.ny, o.levels);
  const auto start = Clock::now();
  for (Runtime* rt : ctx.correctness_runtimes())
    for (const Case& c : correctness_cases()) {
      const std::string what = c.name() + ", contraction " + rt->config().fp_contract;
      std::printf("%s, check grid %lld x %lld, %lld levels\n", what.c_str(), static_cast<long long>(o.nx),
                  static_cast<long long>(o.ny), static_cast<long long>(o.levels));
      granule::Granule granule(ctx.grid, o.levels, c.layout);
      ctx.report.run("prepare: CPU kernels, " + what, [&] { prepare_cpu(*rt, granule, c, section["kernels"]); });
      ctx.report.run("prepare: GPU kernels, " + what,
                     [&] { precompile_stages(*rt, granule, c, arch, "check", section["kernels"]); });
    }
  std::printf("%s, bandwidth grid %lld x %lld, %lld levels (GPU only)\n", kTimedCase.name().c_str(),
              static_cast<long long>(o.bw_nx), static_cast<long long>(o.bw_ny), static_cast<long long>(o.bw_levels));
  ctx.report.run("prepare: GPU kernels, bandwidth grid", [&] {
    const granule::Grid& grid = ctx.bandwidth_grid();
    ctx.report.doc["grids"]["bandwidth"] = describe(grid, o.bw_nx, o.bw_ny, o.bw_levels);
    const granule::Granule granule(grid, o.bw_levels, kTimedCase.layout);
    precompile_stages(ctx.rt, granule, kTimedCase, arch, "bandwidth", section["kernels"]);
  });
  section["seconds"] = seconds_since(start);
  std::uint64_t compiles = 0, disk_hits = 0;
  for (Runtime* rt : ctx.correctness_runtimes()) {
    const KernelMetrics total = rt->metrics().total();
    compiles += total.compiles;
    disk_hits += total.disk_hits;
  }
  section["compiles"] = compiles;
  section["disk_hits"] = disk_hits;
  std::printf("prepared %zu kernels in %.1f s (%llu compiled, %llu found in the cache) into %s\n",
              section["kernels"].size(), section["seconds"].get<double>(), static_cast<unsigned long long>(compiles),
              static_cast<unsigned long long>(disk_hits), ctx.rt.config().cache_dir.c_str());
}

}  // namespace kiln::gpu_check
