#include "runtime/metrics/metrics.hpp"

#include <algorithm>

#include "runtime/metrics/phase_sums.hpp"
#include "runtime/metrics/process_clock.hpp"

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

void Metrics::note_requested(const std::string& kernel, TimePoint at) {
  std::lock_guard lock(mutex_);
  TimePoint& first = first_[kernel].requested;
  if (first == TimePoint{} || at < first) first = at;
}

void Metrics::note_first_call(const std::string& kernel, TimePoint at) {
  std::lock_guard lock(mutex_);
  TimePoint& first = first_[kernel].first_call;
  if (first == TimePoint{} || at < first) first = at;
}

MetricsSnapshot Metrics::snapshot() const {
  const auto now = std::chrono::steady_clock::now();
  const ProcessStart& start = process_start();
  std::lock_guard lock(mutex_);
  MetricsSnapshot out = data_;
  // Without the kernel's start, the Runtime's making stands in for it.
  const TimePoint origin = start.from_kernel ? start.at : created_;
  const auto since = [&](TimePoint t) { return std::chrono::duration<double, std::milli>(t - origin).count(); };
  out.process = {.runtime_created_ms = since(created_),
                 .wall_ms = since(now),
                 .start_resolution_ms = start.resolution_ms,
                 .start_known = start.from_kernel};
  for (const auto& [kernel, first] : first_) {
    KernelMetrics& k = out.kernels[kernel];
    if (first.requested != TimePoint{}) k.requested_ms = since(first.requested);
    if (first.first_call != TimePoint{}) k.first_call_ms = since(first.first_call);
  }
  return out;
}

}  // namespace kiln::runtime

namespace kiln {
namespace {

// The earlier of two times that may be missing.
std::optional<double> earliest(std::optional<double> a, std::optional<double> b) {
  if (!a) return b;
  if (!b) return a;
  return std::min(*a, *b);
}

}  // namespace

KernelMetrics MetricsSnapshot::total() const {
  KernelMetrics sum;
  for (const auto& [name, k] : kernels) {
    for (const auto& [phase, stats] : k.phases) runtime::merge(sum.phases[phase], stats);
    sum.compiles += k.compiles;
    sum.disk_hits += k.disk_hits;
    sum.memory_hits += k.memory_hits;
    sum.peer_hits += k.peer_hits;
    sum.temporary_allocations += k.temporary_allocations;
    sum.threads = k.threads > sum.threads ? k.threads : sum.threads;
    sum.requested_ms = earliest(sum.requested_ms, k.requested_ms);
    sum.first_call_ms = earliest(sum.first_call_ms, k.first_call_ms);
  }
  return sum;
}

}  // namespace kiln
