// Where start-up goes: per kernel, the time of each phase of resolving it and
// of running it, and how often it was compiled, found on disk or in memory.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "kiln/export.hpp"

namespace kiln {

// The phases, in the order a cold resolution goes through them. lock: taking
// the build lock (its file, and on a new cache its folder, made and synced);
// lock_wait: waiting while another process or thread holds it; slot_wait: for
// a free build slot (KILN_BUILD_SLOTS).
inline constexpr const char* kPhases[] = {"specialise", "key",       "memory_lookup", "disk_lookup",
                                          "lock",       "lock_wait", "slot_wait",     "compile",
                                          "store",      "load",      "first_call",    "run"};

// The version of MetricsSnapshot::json()'s layout (docs/metrics.schema.json).
inline constexpr int kMetricsSchemaVersion = 2;

struct PhaseStats {
  std::uint64_t count = 0;
  double min_ms = 0.0;
  double max_ms = 0.0;
  double total_ms = 0.0;
  double avg_ms() const { return count ? total_ms / static_cast<double>(count) : 0.0; }
};

struct KILN_API KernelMetrics {
  std::map<std::string, PhaseStats> phases;  // by phase name
  std::uint64_t compiles = 0;
  std::uint64_t disk_hits = 0;
  std::uint64_t memory_hits = 0;
  std::uint64_t peer_hits = 0;  // binaries received from another member of a collective resolution
  // Buffers allocated (or grown) for the kernel's temporaries: one per
  // temporary and thread calling at once, again only when arrays grow.
  std::uint64_t temporary_allocations = 0;
  int threads = 1;  // the most threads a timed call ran on (Config::threads, Kernel::run_on)
  // Since the process started (ProcessTimes): when a Runtime was first asked
  // for the kernel, and when its first timed call began.
  std::optional<double> requested_ms;
  std::optional<double> first_call_ms;

  // Sums over phases (only count and total_ms mean something): init, every
  // phase of resolving the kernel; run, its calls (first_call and run).
  PhaseStats init() const;
  PhaseStats run() const;
};

// Milliseconds since the process started, as the kernel records a process's
// start: in clock ticks (start_resolution_ms, 10 ms on Linux), so each time
// here may read up to one tick long.
struct ProcessTimes {
  double runtime_created_ms = 0.0;  // the Runtime was made
  double wall_ms = 0.0;             // the snapshot was taken (in the JSON file: the Runtime ended)
  double start_resolution_ms = 0.0;
  bool start_known = false;  // false: /proc unreadable, and the times count from the Runtime's making
};

struct KILN_API MetricsSnapshot {
  std::map<std::string, KernelMetrics> kernels;  // by kernel name ("name (generic)" for generic builds)
  ProcessTimes process;
  KernelMetrics total() const;

  // The init-vs-run table: one row per kernel and phase (calls, t_min, t_avg,
  // t_max, total), then the counters.
  std::string table() const;
  // The same as JSON, with the process's times and the timeline (each
  // kernel's first request and call): {"schema_version": 2, "process": {...},
  // "timeline": [...], "kernels": {name: {"phases": {...}, ...}}, "total": {...}};
  // docs/metrics.schema.json is its schema.
  std::string json() const;
};

}  // namespace kiln
