// What `kiln demo` prints by default: a dozen lines read from the metrics
// (start-up, init cold or warm, run, specialised against generic, the
// counters), where the full table (--table, KILN_METRICS=1) has one line per
// kernel and phase.
#pragma once

#include <string>

#include "kiln/metrics.hpp"

namespace kiln::cli {

struct DemoRun {
  int steps = 0;
  double loop_ms = 0.0;  // the time loop, lookups and calls
};

std::string demo_summary(const MetricsSnapshot& m, const DemoRun& run);

}  // namespace kiln::cli
