// Sums over phases, shared by the table, the JSON and the totals.
#pragma once

#include <string_view>
#include <utility>

#include "kiln/metrics.hpp"

namespace kiln::runtime {

// Adds `from`'s calls and time to `into`, keeping the extremes.
void merge(PhaseStats& into, const PhaseStats& from);

// first_call and run are running the kernel; every other phase resolves it.
inline bool is_run_phase(std::string_view phase) { return phase == "first_call" || phase == "run"; }

// The two lines a user reads first: what resolving cost against what running cost.
std::pair<PhaseStats, PhaseStats> init_and_run(const KernelMetrics& k);

}  // namespace kiln::runtime
