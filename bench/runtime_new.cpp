// kiln_bench's runtime_new/... rows: a new Runtime's construction alone, on
// the same cache folder each time or on a new one each time.
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/kiln_bench_rows.hpp"
#include "bench/kiln_bench_support.hpp"
#include "bench/temp_dir.hpp"

namespace kiln_bench {
namespace {

// What constructing a Runtime costs a program that makes one per task or per
// test (issue 34, item 2): on one cache folder, the trust walk of its path is
// done once per process and then only looked at again (cache/trust.hpp);
// /new_cache: every Runtime on a folder never seen, so every one walks it
// (what each Runtime paid before the walk was remembered). The folders exist
// (populated with one entry) and sit at the same depth. ~Runtime untimed.
constexpr int kRuntimeIterations = 2000;

void runtime_new(benchmark::State& state, bool same_cache) {
  try {
    TempDir dir;
    std::vector<kiln::Config> configs;
    for (int i = 0; i < (same_cache ? 1 : kRuntimeIterations); ++i) {
      const fs::path folder = dir.path() / ("cache-" + std::to_string(i));
      fs::create_directories(folder / "00");
      configs.push_back(config_for(folder));
    }
    std::size_t next = 0;
    double end_us = 0;
    for (auto _ : state) {
      if (next == configs.size() && !same_cache) throw std::runtime_error("more iterations than folders");
      const kiln::Config& config = configs[same_cache ? 0 : next++];
      std::optional<kiln::Runtime> rt;
      const auto t0 = Clock::now();
      rt.emplace(config);
      state.SetIterationTime(seconds_between(t0, Clock::now()));
      const auto t1 = Clock::now();
      rt.reset();
      end_us += seconds_between(t1, Clock::now()) * 1e6;
    }
    state.counters["end_us"] = end_us / static_cast<double>(state.iterations());
    state.SetLabel(same_cache ? "kiln: new Runtime on the same cache folder each time (~Runtime untimed)"
                              : "kiln: new Runtime on a cache folder never seen before (~Runtime untimed)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void register_runtime_new_rows() {
  using benchmark::RegisterBenchmark;
  RegisterBenchmark("runtime_new/same_cache", runtime_new, true)
      ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kRuntimeIterations);
  RegisterBenchmark("runtime_new/new_cache", runtime_new, false)
      ->UseManualTime()->Unit(benchmark::kMicrosecond)->Iterations(kRuntimeIterations);
}

}  // namespace kiln_bench
