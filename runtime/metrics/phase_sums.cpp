#include "runtime/metrics/phase_sums.hpp"

#include <algorithm>

namespace kiln::runtime {

void merge(PhaseStats& into, const PhaseStats& from) {
  if (!from.count) return;
  into.min_ms = into.count ? std::min(into.min_ms, from.min_ms) : from.min_ms;
  into.max_ms = into.count ? std::max(into.max_ms, from.max_ms) : from.max_ms;
  into.total_ms += from.total_ms;
  into.count += from.count;
}

std::pair<PhaseStats, PhaseStats> init_and_run(const KernelMetrics& k) {
  PhaseStats init, run;
  for (const auto& [phase, stats] : k.phases) merge(is_run_phase(phase) ? run : init, stats);
  return {init, run};
}

}  // namespace kiln::runtime

namespace kiln {

PhaseStats KernelMetrics::init() const { return runtime::init_and_run(*this).first; }
PhaseStats KernelMetrics::run() const { return runtime::init_and_run(*this).second; }

}  // namespace kiln
