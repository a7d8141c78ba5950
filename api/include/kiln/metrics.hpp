// Where start-up goes: per kernel, the time of each phase of resolving it and
// of running it, and how often it was compiled, found on disk or in memory.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "kiln/export.hpp"

namespace kiln {

// The phases, in the order a cold resolution goes through them. lock_wait:
// waiting for another process that builds the same kernel; slot_wait: for a
// free build slot (KILN_BUILD_SLOTS).
inline constexpr const char* kPhases[] = {"specialise", "key",     "memory_lookup", "disk_lookup",
                                          "lock_wait",  "slot_wait", "compile",     "store",
                                          "load",       "first_call", "run"};

struct PhaseStats {
  std::uint64_t count = 0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double total_ms = 0.0;
  double avg_ms() const { return count ? total_ms / static_cast<double>(count) : 0.0; }
};

struct KernelMetrics {
  std::map<std::string, PhaseStats> phases;  // by phase name
  std::uint64_t compiles = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t memory_hits = 0;
  std::uint64_t peer_hits = 0;  // binaries received from another member of a collective resolution
  // Buffers allocated (or grown) for the kernel's temporaries: one per
  // temporary and thread calling at once, again only when arrays grow.
  std::uint64_t temporary_allocations = 0;
  int threads = 1;  // the most threads a timed call ran on (Config::threads, Kernel::run_on)
};

struct KILN_API MetricsSnapshot {
  std::map<std::string, KernelMetrics> kernels;  // by kernel name ("name (generic)" for generic builds)
  KernelMetrics total() const;

  // The init-vs-run table: one row per kernel and phase (calls, t_min, t_avg,
  // t_max, total), then the counters.
  std::string table() const;
  // The same as JSON: {"kernels": {name: {"phases": {...}, "compiles": n, ...}}, "total": {...}}.
  std::string json() const;
};

}  // namespace kiln
