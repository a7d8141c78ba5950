// kiln_stencil_bench: the granule's kernels on a realistic grid, each timed
// three ways: specialised on every value, on ICON's choice (levels, strides
// and flags compiled in, the horizontal bounds and indices read at run time,
// so one binary serves every rank: Spec::run_time), and generic; with the
// memory bandwidth each achieves against a STREAM triad measured in the same
// run (one thread, as kiln's CPU kernels). Prints Google Benchmark's table,
// then per kernel: times, ratios, GB/s and percentage of STREAM, against the
// targets of the stencils issue (informational, never asserted). Times are
// medians of repeated runs. Threads: each kernel specialised on 2 threads
// (Config::threads, the prelude's phases), its speed-up over 1 thread set
// against a STREAM triad's on 2 threads (OpenMP, as kiln's) in the same run.
//
//   kiln_stencil_bench [--nx=128 --ny=80 --levels=80 --layout=c|fortran --limited-area] [benchmark flags]
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "kiln/kiln.hpp"
#include "tools/bench/median.hpp"
#include "tools/granule/granule.hpp"
#include "tools/granule/grid.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::granule::Granule;
using kiln::granule::Grid;
using kiln::granule::Layout;

struct Options {
  std::int64_t nx = 128, ny = 80, levels = 80;  // near ICON's R02B04 with 80 levels
  Layout layout = Layout::c;
  bool limited_area = false;
};

// The three ways of building a kernel that are compared.
enum Way { kConstant, kIconChoice, kGeneric };
constexpr Way kWays[] = {kConstant, kIconChoice, kGeneric};
constexpr const char* kWayNames[] = {"specialised", "icon_choice", "generic"};

// The granule's parameters that are horizontal indices: they differ between
// ranks (and threads' chunks), so ICON's choice reads them at run time.
constexpr const char* kHorizontal[] = {"horizontal_start", "horizontal_end", "interior_idx", "halo_idx",
                                       "start_2nd_nudge_line_idx_e"};

kiln::Spec icon_choice(kiln::Spec spec) {
  for (const char* name : kHorizontal)
    if (spec.find(name)) spec.run_time(name);
  return spec;
}

// The grid, one granule, the handles of every way resolved once (cache in a
// temporary folder, so every run starts cold and compiles the same way).
// Every way runs on the same arrays: with a granule per way, each way's own
// allocations (their pages, their alignment) made specialised look 4-15%
// slower than generic on the point-wise kernels, while the same handles,
// timed interleaved on one set of arrays, ran within 1% of each other.
struct Fixture {
  fs::path cache_dir;
  std::optional<kiln::Runtime> rt;
  std::unique_ptr<Grid> grid;
  std::unique_ptr<Granule> granule;
  std::vector<kiln::Kernel> kernels[3];
  std::optional<kiln::Runtime> two_threads;  // the same cache: its kernels are disk hits
  std::vector<kiln::Kernel> kernels_on_two;   // specialised, each call on 2 threads

  explicit Fixture(const Options& o) {
    std::string pattern = (fs::temp_directory_path() / "kiln-stencil-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw std::runtime_error("mkdtemp failed");
    cache_dir = pattern;
    kiln::Config config;
    config.cache_dir = cache_dir;
    config.log_level = "error";
    rt.emplace(config);
    grid = std::make_unique<Grid>(o.limited_area ? Grid::limited_area(o.nx, o.ny) : Grid::torus(o.nx, o.ny));
    granule = std::make_unique<Granule>(*grid, o.levels, o.layout);
    for (Way way : kWays) {
      for (const auto& stage : granule->stages()) {
        const kiln::Spec spec = way == kIconChoice ? icon_choice(stage.spec) : stage.spec;
        kernels[way].push_back(rt->kernel(stage.kernel, spec, way == kGeneric ? kiln::Mode::generic
                                                                              : kiln::Mode::specialised));
      }
    }
    config.threads = 2;
    two_threads.emplace(config);
    for (const auto& stage : granule->stages()) kernels_on_two.push_back(two_threads->kernel(stage.kernel, stage.spec));
  }
  ~Fixture() {
    two_threads.reset();
    rt.reset();
    std::error_code ignored;
    fs::remove_all(cache_dir, ignored);
  }
};

std::unique_ptr<Fixture> g_fixture;

// a[i] = b[i] + s * c[i] over arrays far larger than the caches: the
// bandwidth a streaming kernel can reach on one core. 24 bytes per element
// (two reads, one write), STREAM's convention, as the kernels' figures.
// On `threads` OpenMP threads, each its own contiguous part (first touched
// by the thread that streams it, as kiln's phases share points).
void stream_triad(benchmark::State& state, int threads) {
  const std::size_t n = std::size_t{1} << 24;  // 3 x 128 MiB
  std::vector<double> a(n), b(n), c(n);
  const double s = 3.0;
  double* __restrict pa = a.data();
  double* __restrict pb = b.data();
  double* __restrict pc = c.data();
#pragma omp parallel for num_threads(threads) schedule(static)
  for (std::size_t i = 0; i < n; ++i) pa[i] = 0.0, pb[i] = 1.0, pc[i] = 2.0;
  for (auto _ : state) {
#pragma omp parallel for num_threads(threads) schedule(static)
    for (std::size_t i = 0; i < n; ++i) pa[i] = pb[i] + s * pc[i];
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(24 * n));
  state.SetLabel(threads == 1 ? "STREAM triad, one thread" : "STREAM triad, 2 threads");
}

// way < 0: specialised, each call on 2 threads.
void stage_call(benchmark::State& state, std::size_t index, int way) {
  Fixture& fx = *g_fixture;
  const kiln::granule::Stage& stage = fx.granule->stages()[index];
  const kiln::Kernel kernel = way < 0 ? fx.kernels_on_two[index] : fx.kernels[way][index];
  for (auto _ : state) {
    stage.call(kernel);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * stage.bytes));
}

// The console table, plus each benchmark's seconds per iteration and bytes
// per second, for the comparison printed at the end.
class SummaryReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.error_occurred) continue;
      const bool plain = run.run_type == Run::RT_Iteration && run.repetitions <= 1;
      const bool median = run.run_type == Run::RT_Aggregate && run.aggregate_name == "median";
      if (!plain && !median) continue;
      Result& r = results_[run.run_name.function_name];
      r.seconds = run.GetAdjustedRealTime() / benchmark::GetTimeUnitMultiplier(run.time_unit);
      if (auto it = run.counters.find("bytes_per_second"); it != run.counters.end()) r.bytes_per_second = it->second;
    }
  }

  void print_summary(const Granule& granule) const {
    const auto stream = results_.find("stream_triad");
    if (stream == results_.end()) return;
    const double stream_gbs = stream->second.bytes_per_second / 1e9;
    std::printf("\nspecialised, ICON's choice (horizontal indices at run time) and generic; bandwidth vs STREAM "
                "triad (%.2f GB/s, one thread); informational\n",
                stream_gbs);
    std::printf("  %-72s %9s %9s %9s %9s %9s %7s %7s\n", "kernel", "spec ms", "icon ms", "gen ms", "icon/spec",
                "gen/spec", "GB/s", "STREAM");
    std::vector<double> speedups, icon_ratios, icon_over_generic;
    for (const auto& stage : granule.stages()) {
      const auto s = results_.find("stencil/" + stage.kernel + "/specialised");
      const auto i = results_.find("stencil/" + stage.kernel + "/icon_choice");
      const auto g = results_.find("stencil/" + stage.kernel + "/generic");
      if (s == results_.end() || i == results_.end() || g == results_.end()) continue;
      const double speedup = g->second.seconds / s->second.seconds;
      const double icon = i->second.seconds / s->second.seconds;
      const double gbs = s->second.bytes_per_second / 1e9;
      speedups.push_back(speedup);
      icon_ratios.push_back(icon);
      icon_over_generic.push_back(i->second.seconds / g->second.seconds);
      std::printf("  %-72s %9.3f %9.3f %9.3f %8.2fx %8.2fx %7.2f %6.0f%%\n", stage.kernel.c_str(),
                  s->second.seconds * 1e3, i->second.seconds * 1e3, g->second.seconds * 1e3, icon, speedup, gbs,
                  100.0 * gbs / stream_gbs);
    }
    if (speedups.empty()) return;
    const double median = kiln_bench::median_of(speedups);
    std::printf("  median speed-up of specialised over generic: %.2fx, target >= 1.2x: %s\n", median,
                median >= 1.2 ? "met" : "MISSED");
    std::printf("  ICON's choice, median time: %.2fx the all-constant build's, %.2fx the generic build's "
                "(one binary per kernel for every rank)\n",
                kiln_bench::median_of(icon_ratios), kiln_bench::median_of(icon_over_generic));
    std::printf("  (memory-bound target: 70%% of STREAM or more; the percentages above, per kernel)\n");
    print_threads(granule);
  }

  // Each kernel's speed-up on 2 threads over 1, against STREAM's.
  void print_threads(const Granule& granule) const {
    const auto one = results_.find("stream_triad"), two = results_.find("stream_triad_2threads");
    if (one == results_.end() || two == results_.end()) return;
    const double stream_scaling = one->second.seconds / two->second.seconds;
    std::printf("\nthreads: speed-up of 2 threads over 1, specialised, against the STREAM triad's %.2fx "
                "(%.2f -> %.2f GB/s); target >= 0.9 of STREAM's; informational\n",
                stream_scaling, one->second.bytes_per_second / 1e9, two->second.bytes_per_second / 1e9);
    for (const auto& stage : granule.stages()) {
      const auto s1 = results_.find("stencil/" + stage.kernel + "/specialised");
      const auto s2 = results_.find("stencil/" + stage.kernel + "/threads2");
      if (s1 == results_.end() || s2 == results_.end()) continue;
      const double scaling = s1->second.seconds / s2->second.seconds;
      std::printf("  %-72s %9.3f ms -> %9.3f ms: %5.2fx, %4.2f of STREAM's: %s\n", stage.kernel.c_str(),
                  s1->second.seconds * 1e3, s2->second.seconds * 1e3, scaling, scaling / stream_scaling,
                  scaling >= 0.9 * stream_scaling ? "met" : "MISSED");
    }
  }

 private:
  struct Result {
    double seconds = 0;
    double bytes_per_second = 0;
  };
  std::map<std::string, Result> results_;
};

// Takes this program's own --nx/--ny/--levels/--layout/--limited-area out of argv.
Options parse_options(std::vector<char*>& args) {
  Options o;
  std::vector<char*> rest;
  for (char* arg : args) {
    const std::string a = arg;
    auto value = [&](const char* name) -> const char* {
      const std::string prefix = std::string(name) + "=";
      return a.rfind(prefix, 0) == 0 ? arg + prefix.size() : nullptr;
    };
    if (const char* v = value("--nx")) o.nx = std::atoll(v);
    else if (const char* v = value("--ny")) o.ny = std::atoll(v);
    else if (const char* v = value("--levels")) o.levels = std::atoll(v);
    else if (const char* v = value("--layout")) o.layout = std::strcmp(v, "fortran") == 0 ? Layout::fortran : Layout::c;
    else if (a == "--limited-area") o.limited_area = true;
    else rest.push_back(arg);
  }
  args = rest;
  return o;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<char*> args(argv, argv + argc);
  const Options options = parse_options(args);
  // Defaults for stable figures (each given flag wins): medians of 5 runs of
  // 0.2 s, the ways' runs interleaved in random order, so that a drift of the
  // machine (another process, the frequency) falls on every way alike.
  static char default_min_time[] = "--benchmark_min_time=0.2";
  static char default_repetitions[] = "--benchmark_repetitions=5";
  static char default_aggregates[] = "--benchmark_report_aggregates_only=true";
  static char default_interleaving[] = "--benchmark_enable_random_interleaving=true";
  for (char* flag : {default_min_time, default_repetitions, default_aggregates, default_interleaving}) {
    const std::string name = std::string(flag).substr(0, std::string(flag).find('='));
    bool given = false;
    for (char* a : args)
      if (std::strncmp(a, name.c_str(), name.size()) == 0) given = true;
    if (!given) args.insert(args.begin() + 1, flag);
  }
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  try {
    std::printf("setting up: grid %lldx%lld rhombi, %lld levels, %s layout; compiling every kernel three ways...\n",
                static_cast<long long>(options.nx), static_cast<long long>(options.ny),
                static_cast<long long>(options.levels), options.layout == Layout::c ? "C" : "Fortran");
    g_fixture = std::make_unique<Fixture>(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_stencil_bench: %s\n", e.what());
    return 1;
  }
  benchmark::RegisterBenchmark("stream_triad", stream_triad, 1)->Unit(benchmark::kMillisecond);
  benchmark::RegisterBenchmark("stream_triad_2threads", stream_triad, 2)->Unit(benchmark::kMillisecond);
  const auto& stages = g_fixture->granule->stages();
  for (std::size_t i = 0; i < stages.size(); ++i)
    for (Way way : kWays) {
      const std::string name = "stencil/" + stages[i].kernel + "/" + kWayNames[way];
      benchmark::RegisterBenchmark(name.c_str(), [i, way](benchmark::State& state) {
        stage_call(state, i, way);
      })->Unit(benchmark::kMillisecond);
    }
  for (std::size_t i = 0; i < stages.size(); ++i)
    benchmark::RegisterBenchmark(("stencil/" + stages[i].kernel + "/threads2").c_str(),
                                 [i](benchmark::State& state) { stage_call(state, i, -1); })
        ->Unit(benchmark::kMillisecond);

  SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  reporter.print_summary(*g_fixture->granule);
  g_fixture.reset();
  benchmark::Shutdown();
  return 0;
}
