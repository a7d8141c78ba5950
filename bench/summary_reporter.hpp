// The console table of a bench program, plus what its summary after the table
// compares: each row's time (the median where the row repeats) in seconds and
// its counters, by the row's name. kiln_bench and kiln_stencil_bench print
// their comparisons from it.
#pragma once

#include <benchmark/benchmark.h>

#include <map>
#include <string>
#include <vector>

namespace kiln_bench {

class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  struct Result {
    double seconds = 0;
    std::map<std::string, double> counters;

    // The counter `name`, 0 when the row has none.
    double counter(const std::string& name) const {
      const auto it = counters.find(name);
      return it == counters.end() ? 0.0 : it->second;
    }
  };

  explicit SummaryReporter(OutputOptions options = OO_Defaults) : ConsoleReporter(options) {}

  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool plain = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!plain && !median) continue;
      Result& r = results_[run.run_name.function_name];
      r.seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      for (const auto& [name, counter] : run.counters) r.counters[name] = counter.value;
    }
  }

  // The row `name` (without the repetitions' suffixes), or null when it did not run or failed.
  const Result* find(const std::string& name) const {
    const auto it = results_.find(name);
    return it == results_.end() ? nullptr : &it->second;
  }
  bool empty() const { return results_.empty(); }

 private:
  std::map<std::string, Result> results_;
};

}  // namespace kiln_bench
