#include "runtime/metrics/metrics.hpp"

#include <algorithm>
#include <cstdio>
#include <string_view>

#include <nlohmann/json.hpp>

namespace kiln::runtime {

void Metrics::record(const std::string& kernel, const char* phase, double ms) {
  std::lock_guard lock(mutex_);
  PhaseStats& s = data_.kernels[kernel].phases[phase];
  s.min_ms = s.count ? std::min(s.min_ms, ms) : ms;
  s.max_ms = s.count ? std::max(s.max_ms, ms) : ms;
  s.total_ms += ms;
  ++s.count;
}

void Metrics::count_compile(const std::string& kernel) {
  std::lock_guard lock(mutex_);
  ++data_.kernels[kernel].compiles;
}

void Metrics::count_disk_hit(const std::string& kernel) {
  std::lock_guard lock(mutex_);
  ++data_.kernels[kernel].disk_hits;
}

void Metrics::count_peer_hit(const std::string& kernel) {
  std::lock_guard lock(mutex_);
  ++data_.kernels[kernel].peer_hits;
}

void Metrics::note_threads(const std::string& kernel, int threads) {
  std::lock_guard lock(mutex_);
  int& most = data_.kernels[kernel].threads;
  if (threads > most) most = threads;
}

void Metrics::count_temporary_allocation(const std::string& kernel) {
  std::lock_guard lock(mutex_);
  ++data_.kernels[kernel].temporary_allocations;
}

MetricsSnapshot Metrics::snapshot() const {
  std::lock_guard lock(mutex_);
  return data_;
}

}  // namespace kiln::runtime

namespace kiln {
namespace {

void merge(PhaseStats& into, const PhaseStats& from) {
  if (!from.count) return;
  into.min_ms = into.count ? std::min(into.min_ms, from.min_ms) : from.min_ms;
  into.max_ms = into.count ? std::max(into.max_ms, from.max_ms) : from.max_ms;
  into.total_ms += from.total_ms;
  into.count += from.count;
}

bool is_run_phase(std::string_view phase) { return phase == "first_call" || phase == "run"; }

// The two lines a user reads first: what resolving cost against what running cost.
std::pair<PhaseStats, PhaseStats> init_and_run(const KernelMetrics& k) {
  PhaseStats init, run;
  for (const auto& [phase, stats] : k.phases) merge(is_run_phase(phase) ? run : init, stats);
  return {init, run};
}

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

nlohmann::ordered_json to_json(const KernelMetrics& k) {
  nlohmann::ordered_json phases = nlohmann::ordered_json::object();
  for (const char* phase : kPhases) {
    auto it = k.phases.find(phase);
    if (it == k.phases.end()) continue;
    const PhaseStats& s = it->second;
    phases[phase] = {{"count", s.count}, {"min_ms", s.min_ms}, {"avg_ms", s.avg_ms()},
                     {"max_ms", s.max_ms}, {"total_ms", s.total_ms}};
  }
  const auto [init, run] = init_and_run(k);
  return {{"phases", phases},           {"init_ms", init.total_ms}, {"run_ms", run.total_ms},
          {"compiles", k.compiles},     {"disk_hits", k.disk_hits}, {"memory_hits", k.memory_hits},
          {"peer_hits", k.peer_hits},   {"temporary_allocations", k.temporary_allocations},
          {"threads", k.threads}};
}

}  // namespace

KernelMetrics MetricsSnapshot::total() const {
  KernelMetrics sum;
  for (const auto& [name, k] : kernels) {
    for (const auto& [phase, stats] : k.phases) merge(sum.phases[phase], stats);
    sum.compiles += k.compiles;
    sum.disk_hits += k.disk_hits;
    sum.memory_hits += k.memory_hits;
    sum.peer_hits += k.peer_hits;
    sum.temporary_allocations += k.temporary_allocations;
    sum.threads = k.threads > sum.threads ? k.threads : sum.threads;
  }
  return sum;
}

std::string MetricsSnapshot::table() const {
  char header[256];
  std::snprintf(header, sizeof header, "%-40s %-14s %8s %11s %11s %11s %12s\n", "kernel", "phase", "calls",
                "t_min[ms]", "t_avg[ms]", "t_max[ms]", "total[ms]");
  std::string out = header;
  auto add_kernel = [&](const std::string& name, const KernelMetrics& k) {
    for (const char* phase : kPhases)
      if (auto it = k.phases.find(phase); it != k.phases.end()) out += row(name, phase, it->second);
    const auto [init, run] = init_and_run(k);
    out += sum_row(name, "= init", init);
    out += sum_row(name, "= run", run);
    out += "    compiles " + std::to_string(k.compiles) + ", disk hits " + std::to_string(k.disk_hits) +
           ", memory hits " + std::to_string(k.memory_hits) +
           (k.peer_hits ? ", peer hits " + std::to_string(k.peer_hits) : std::string()) +
           (k.temporary_allocations ? ", temporary allocations " + std::to_string(k.temporary_allocations)
                                    : std::string()) +
           (k.threads > 1 ? ", threads " + std::to_string(k.threads) : std::string()) +
           "\n";
  };
  for (const auto& [name, k] : kernels) add_kernel(name, k);
  add_kernel("TOTAL", total());
  return out;
}

std::string MetricsSnapshot::json() const {
  nlohmann::ordered_json out;
  out["kernels"] = nlohmann::ordered_json::object();
  for (const auto& [name, k] : kernels) out["kernels"][name] = to_json(k);
  out["total"] = to_json(total());
  return out.dump(2);
}

}  // namespace kiln
