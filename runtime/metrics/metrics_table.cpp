// MetricsSnapshot::table(): the init-vs-run table (KILN_METRICS=1, kiln demo --table).
#include <cstdio>

#include "kiln/metrics.hpp"
#include "runtime/metrics/phase_sums.hpp"

namespace kiln {
namespace {

std::string row(const std::string& kernel, const std::string& phase, const PhaseStats& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-40s %-14s %8llu %11.4f %11.4f %11.4f %12.3f\n", kernel.c_str(), phase.c_str(),
                static_cast<unsigned long long>(s.count), s.min_ms, s.avg_ms(), s.max_ms, s.total_ms);
  return line;
}

// A sum over phases: only its total means something.
std::string sum_row(const std::string& kernel, const std::string& what, const PhaseStats& s) {
  char line[256];
  std::snprintf(line, sizeof line, "%-40s %-14s %8s %11s %11s %11s %12.3f\n", kernel.c_str(), what.c_str(), "", "", "",
                "", s.total_ms);
  return line;
}

std::string counters(const KernelMetrics& k) {
  return "    compiles " + std::to_string(k.compiles) + ", disk hits " + std::to_string(k.disk_hits) +
         ", memory hits " + std::to_string(k.memory_hits) +
         (k.peer_hits ? ", peer hits " + std::to_string(k.peer_hits) : std::string()) +
         (k.temporary_allocations ? ", temporary allocations " + std::to_string(k.temporary_allocations)
                                  : std::string()) +
         (k.threads > 1 ? ", threads " + std::to_string(k.threads) : std::string()) + "\n";
}

}  // namespace

std::string MetricsSnapshot::table() const {
  char header[256];
  std::snprintf(header, sizeof header, "%-40s %-14s %8s %11s %11s %11s %12s\n", "kernel", "phase", "calls",
                "t_min[ms]", "t_avg[ms]", "t_max[ms]", "total[ms]");
  std::string out = header;
  auto add_kernel = [&](const std::string& name, const KernelMetrics& k) {
    for (const char* phase : kPhases)
      if (auto it = k.phases.find(phase); it != k.phases.end()) out += row(name, phase, it->second);
    const auto [init, run] = runtime::init_and_run(k);
    out += sum_row(name, "= init", init);
    out += sum_row(name, "= run", run);
    out += counters(k);
  };
  for (const auto& [name, k] : kernels) add_kernel(name, k);
  add_kernel("TOTAL", total());
  return out;
}

}  // namespace kiln
