// Times since this process started, for the metrics' timeline: when the
// program made its Runtime, first asked for a kernel, first ran one.
#pragma once

#include <chrono>

namespace kiln::runtime {

struct ProcessStart {
  std::chrono::steady_clock::time_point at;
  // The kernel keeps a process's start in clock ticks (1/CLK_TCK s, 10 ms on
  // Linux): times since it may read up to one tick long.
  double resolution_ms = 0.0;
  bool from_kernel = false;  // false: /proc unreadable, the first use of this clock stands in
};

// Read once, on first use (~20 µs: one read of /proc/self/stat), never at load.
const ProcessStart& process_start();

// Milliseconds from the process's start to `t`.
double ms_since_process_start(std::chrono::steady_clock::time_point t);

}  // namespace kiln::runtime
