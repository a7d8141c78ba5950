// Check 3: a process's warm start on the GPU. A new Runtime on the same
// (warm) cache resolves every GPU kernel the checks before resolved
// (gpu_kernel: key, index look-up, binary read, driver load), timed per
// kernel, against cuModuleLoadData + cuModuleGetFunction alone of the same
// bytes (read beforehand, outside the time). The device's context exists
// already for both: the first Runtime made it.
#include <chrono>
#include <cstdio>
#include <memory>

#include "cli/gpu/cached_image.hpp"
#include "cli/gpu/checks.hpp"
#include "cli/gpu/cuda_calls.hpp"

namespace kiln::gpu_check {
namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string label(const Resolved& r) {
  return r.kernel + (r.mode == Mode::generic ? " (generic)" : "") + " " + r.key.substr(0, 8);
}

}  // namespace

void check_warm_start(Context& ctx) {
  nlohmann::ordered_json& section = ctx.report.doc["warm_start"];
  std::printf(
      "\n3. warm start: a new Runtime resolving the %zu GPU kernels above from the cache, against "
      "cuModuleLoadData + cuModuleGetFunction of the same bytes\n",
      ctx.resolved.size());
  Driver::get();  // its entry points looked up before the first raw load is timed
  const auto made = Clock::now();
  Runtime fresh(Config::from_env());
  const double runtime_ms = ms_since(made);
  std::vector<double> kiln_ms, raw_ms;
  section["kernels"] = nlohmann::ordered_json::array();
  for (const Resolved& r : ctx.resolved) {
    nlohmann::ordered_json row = {
        {"kernel", r.kernel}, {"mode", r.mode == Mode::generic ? "generic" : "specialised"}, {"key", r.key}};
    try {
      auto start = Clock::now();
      const GpuKernel k = fresh.gpu_kernel(r.kernel, r.spec, r.mode);
      const double kiln = ms_since(start);
      if (k.key() != r.key) throw std::runtime_error("the new Runtime resolved key " + k.key() + ", not " + r.key);
      const std::vector<char> image = cached_image(fresh.config(), r.key);
      start = Clock::now();
      auto module = std::make_unique<Module>(image, entry_symbol(r.key));
      const double raw = ms_since(start);
      module.reset();
      kiln_ms.push_back(kiln);
      raw_ms.push_back(raw);
      row.update({{"image_bytes", image.size()}, {"kiln_ms", kiln}, {"raw_ms", raw}});
      std::printf("  %-84s kiln %7.3f ms  raw %7.3f ms  (%zu bytes)\n", label(r).c_str(), kiln, raw, image.size());
    } catch (const std::exception& e) {
      if (device_hung()) throw;  // nothing more can run: the check stops here
      ctx.report.error("warm start: " + label(r), e.what());
      row["error"] = e.what();
    }
    section["kernels"].push_back(std::move(row));
  }
  double kiln_total = 0.0, raw_total = 0.0;
  for (double v : kiln_ms) kiln_total += v;
  for (double v : raw_ms) raw_total += v;
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  const KernelMetrics total = fresh.metrics().total();
  for (const auto& [phase, stats] : total.phases)
    phases[phase] = {{"count", stats.count}, {"total_ms", stats.total_ms}};
  section["total"] = {{"kernels", kiln_ms.size()},
                      {"runtime_made_ms", runtime_ms},
                      {"kiln_ms", kiln_total},
                      {"raw_ms", raw_total},
                      {"ratio", raw_total > 0 ? kiln_total / raw_total : 0.0},
                      {"kiln_median_ms", median(kiln_ms)},
                      {"raw_median_ms", median(raw_ms)},
                      {"disk_hits", total.disk_hits},
                      {"compiles", total.compiles}};
  section["kiln_phases"] = phases;
  std::printf(
      "  total: kiln %.2f ms, raw %.2f ms (%.2fx); median per kernel kiln %.3f ms, raw %.3f ms; "
      "%llu disk hits, %llu compiles; making the Runtime %.2f ms\n  the new Runtime's phases:",
      kiln_total, raw_total, raw_total > 0 ? kiln_total / raw_total : 0.0, median(kiln_ms), median(raw_ms),
      static_cast<unsigned long long>(total.disk_hits), static_cast<unsigned long long>(total.compiles), runtime_ms);
  for (const auto& [phase, stats] : total.phases) std::printf(" %s %.2f ms", phase.c_str(), stats.total_ms);
  std::printf("\n");
}

}  // namespace kiln::gpu_check
