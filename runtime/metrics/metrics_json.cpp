// MetricsSnapshot::json(): what KILN_METRICS_FILE holds. Its layout is
// docs/metrics.schema.json; change both, and kMetricsSchemaVersion, together.
#include <algorithm>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/metrics.hpp"
#include "runtime/metrics/phase_sums.hpp"

namespace kiln {
namespace {

using Json = nlohmann::ordered_json;

// A time that may be missing (never requested, calls not timed) is null.
Json time_or_null(const std::optional<double>& ms) { return ms ? Json(*ms) : Json(nullptr); }

Json kernel_json(const KernelMetrics& k) {
  Json phases = Json::object();
  for (const char* phase : kPhases) {
    auto it = k.phases.find(phase);
    if (it == k.phases.end()) continue;
    const PhaseStats& s = it->second;
    phases[phase] = {{"count", s.count}, {"min_ms", s.min_ms}, {"avg_ms", s.avg_ms()},
                     {"max_ms", s.max_ms}, {"total_ms", s.total_ms}};
  }
  const auto [init, run] = runtime::init_and_run(k);
  return {{"phases", phases},           {"init_ms", init.total_ms}, {"run_ms", run.total_ms},
          {"compiles", k.compiles},     {"disk_hits", k.disk_hits}, {"memory_hits", k.memory_hits},
          {"peer_hits", k.peer_hits},   {"temporary_allocations", k.temporary_allocations},
          {"threads", k.threads}};
}

Json process_json(const ProcessTimes& p, const KernelMetrics& total) {
  return {{"start_known", p.start_known},
          {"start_resolution_ms", p.start_resolution_ms},
          {"runtime_created_ms", p.runtime_created_ms},
          {"first_request_ms", time_or_null(total.requested_ms)},
          {"first_call_ms", time_or_null(total.first_call_ms)},
          {"wall_ms", p.wall_ms}};
}

// Kernels in the order the program first asked for them (then first ran
// them): start-up as it happened.
Json timeline_json(const std::map<std::string, KernelMetrics>& kernels) {
  std::vector<const std::pair<const std::string, KernelMetrics>*> order;
  for (const auto& entry : kernels) order.push_back(&entry);
  const auto when = [](const KernelMetrics& k) {
    return std::pair(k.requested_ms.value_or(1e300), k.first_call_ms.value_or(1e300));
  };
  std::stable_sort(order.begin(), order.end(), [&](auto* a, auto* b) { return when(a->second) < when(b->second); });
  Json out = Json::array();
  for (const auto* entry : order)
    out.push_back({{"kernel", entry->first},
                   {"requested_ms", time_or_null(entry->second.requested_ms)},
                   {"first_call_ms", time_or_null(entry->second.first_call_ms)}});
  return out;
}

}  // namespace

std::string MetricsSnapshot::json() const {
  const KernelMetrics sum = total();
  Json out;
  out["schema_version"] = kMetricsSchemaVersion;
  out["process"] = process_json(process, sum);
  out["timeline"] = timeline_json(kernels);
  out["kernels"] = Json::object();
  for (const auto& [name, k] : kernels) out["kernels"][name] = kernel_json(k);
  out["total"] = kernel_json(sum);
  return out.dump(2);
}

}  // namespace kiln
