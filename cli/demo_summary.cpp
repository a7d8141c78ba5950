#include "cli/demo_summary.hpp"

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln::cli {
namespace {

constexpr std::string_view kGeneric = " (generic)";

bool is_generic(const std::string& name) { return name.ends_with(kGeneric); }

std::string format(const char* pattern, ...) {
  char line[512];
  va_list args;
  va_start(args, pattern);
  std::vsnprintf(line, sizeof line, pattern, args);
  va_end(args);
  return line;
}

double phase_total(const KernelMetrics& k, const char* phase) {
  const auto it = k.phases.find(phase);
  return it == k.phases.end() ? 0.0 : it->second.total_ms;
}

std::string start_up_line(const MetricsSnapshot& m, const KernelMetrics& total) {
  if (!m.process.start_known || !total.requested_ms) return {};
  std::string line = format("start-up: process start to first kernel request %.0f ms", *total.requested_ms);
  if (total.first_call_ms) line += format(", to first call %.0f ms", *total.first_call_ms);
  return line + "\n";
}

// The three slowest kernels to resolve, with their time.
std::string slowest_init(const MetricsSnapshot& m) {
  std::vector<std::pair<double, std::string>> by_init;
  for (const auto& [name, k] : m.kernels) by_init.emplace_back(k.init().total_ms, name);
  std::sort(by_init.rbegin(), by_init.rend());
  std::string out;
  for (std::size_t i = 0; i < std::min<std::size_t>(3, by_init.size()); ++i)
    out += format("%s%s %.1f ms", i ? ", " : "", by_init[i].second.c_str(), by_init[i].first);
  return out;
}

// Whether init compiled every kernel, none, or some.
const char* init_temperature(const KernelMetrics& total) {
  if (total.compiles == 0) return "warm";
  return total.disk_hits + total.peer_hits == 0 ? "cold" : "partly warm";
}

std::string init_line(const MetricsSnapshot& m, const KernelMetrics& total) {
  std::string line =
      format("init (%s): %zu kernels in %.1f ms", init_temperature(total), m.kernels.size(), total.init().total_ms);
  if (total.compiles) line += format(", of which compile %.1f ms", phase_total(total, "compile"));
  return line + "; slowest " + slowest_init(m) + "\n";
}

// Per step, the specialised kernels' calls and the generic ones'.
std::pair<double, double> step_ms(const MetricsSnapshot& m, int steps) {
  double specialised = 0.0, generic = 0.0;
  for (const auto& [name, k] : m.kernels) (is_generic(name) ? generic : specialised) += k.run().total_ms;
  return {specialised / steps, generic / steps};
}

std::string run_line(const MetricsSnapshot& m, const DemoRun& run) {
  const auto [specialised, generic] = step_ms(m, run.steps);
  std::string line = format("run: %d steps; the kernels' calls take a step:", run.steps);
  if (specialised > 0) line += format(" specialised %.2f ms", specialised);
  if (generic > 0) line += format("%s generic %.2f ms", specialised > 0 ? "," : "", generic);
  return line + "\n";
}

// Generic's time over specialised's, for the step and each kernel's calls.
std::string comparison_line(const MetricsSnapshot& m, int steps) {
  const auto [specialised, generic] = step_ms(m, steps);
  if (specialised <= 0 || generic <= 0) return {};
  double low = 1e300, high = 0.0;
  for (const auto& [name, k] : m.kernels) {
    if (is_generic(name)) continue;
    const auto it = m.kernels.find(name + std::string(kGeneric));
    if (it == m.kernels.end() || k.run().total_ms <= 0) continue;
    const double ratio = it->second.run().total_ms / k.run().total_ms;
    low = std::min(low, ratio);
    high = std::max(high, ratio);
  }
  return format("specialised against generic: a step %.2fx as fast (per kernel %.2fx to %.2fx)\n",
                generic / specialised, low, high);
}

std::string share_line(const MetricsSnapshot& m, const KernelMetrics& total) {
  const double wall = m.process.wall_ms;
  if (!m.process.start_known || wall <= 0) return {};
  return format("of the process's %.0f ms so far: init %.1f%%, run %.1f%%\n", wall,
                100.0 * total.init().total_ms / wall, 100.0 * total.run().total_ms / wall);
}

}  // namespace

std::string demo_summary(const MetricsSnapshot& m, const DemoRun& run) {
  const KernelMetrics total = m.total();
  return start_up_line(m, total) + init_line(m, total) + run_line(m, run) + comparison_line(m, run.steps) +
         share_line(m, total) +
         format("summary: %llu compiles, %llu disk hits, %llu memory hits; time loop %.1f ms\n",
                static_cast<unsigned long long>(total.compiles), static_cast<unsigned long long>(total.disk_hits),
                static_cast<unsigned long long>(total.memory_hits), run.loop_ms);
}

}  // namespace kiln::cli
