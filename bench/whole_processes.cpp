// kiln_bench's process_warm_20/... and process_cold_1/... rows: whole new
// processes (kiln_bench_warm_process, kiln_bench_dlopen_process) timed from
// spawn to exit: 20 cached kernels resolved and called, or one compiled.
#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "bench/child_process.hpp"
#include "bench/gpp_alternative.hpp"
#include "bench/kiln_bench_rows.hpp"
#include "bench/kiln_bench_support.hpp"
#include "bench/median.hpp"
#include "bench/process_kernels.hpp"
#include "bench/temp_dir.hpp"

namespace kiln_bench {
namespace {

struct ProcessFixture {
  TempDir root;
  fs::path kiln_cache;
  std::vector<std::string> libs;
  double kiln_checksum = 0, alt_checksum = 0;
  double kiln_rss_mb = 0, alt_rss_mb = 0;  // peak RSS of the validation runs
};

std::vector<std::string> kiln_env(const fs::path& cache, bool rss = false) {
  std::vector<std::string> env{"KILN_CACHE_DIR=" + cache.string(), "KILN_LOG_LEVEL=error"};
  if (rss) env.push_back("KILN_BENCH_RSS=1");
  return env;
}

double peak_rss_mb(const std::map<std::string, std::string>& lines) {
  return double(field_ll(lines, "peak_rss_kb")) / 1024.0;
}

// Built on first use: the kiln cache with the 20 specialisations (by a helper
// process that compiles them), the 20 g++ .so files of the same
// specialisations, and one validation run of each helper (same checksums).
// Fixtures are released at the end of main, while libkiln's own statics live.
std::unique_ptr<ProcessFixture> g_process_fixture;
std::string g_process_fixture_error;

const ProcessFixture& process_fixture() {
  std::unique_ptr<ProcessFixture>& fixture = g_process_fixture;
  std::string& error = g_process_fixture_error;
  if (!fixture && error.empty()) {
    try {
      auto fx = std::make_unique<ProcessFixture>();
      const fs::path root = fx->root.path();
      fx->kiln_cache = root / "kiln-cache";
      {
        Spawner populate({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "cold"},
                         kiln_env(fx->kiln_cache), root / "populate.out", root / "populate.err");
        check_child(populate.run(), populate);
      }
      fs::create_directories(root / "alt");
      std::vector<std::pair<fs::path, fs::path>> jobs;
      for (int i = 0; i < kiln_bench::kProcessKernels; ++i) {
        char stem[32];
        std::snprintf(stem, sizeof stem, "k%02d", i);
        const fs::path cpp = root / "alt" / (std::string(stem) + ".cpp");
        const fs::path so = root / "alt" / (std::string(stem) + ".so");
        write_text(cpp, alternative_source("update_theta_and_exner", kiln_bench::process_spec(i)));
        jobs.emplace_back(cpp, so);
        fx->libs.push_back(so.string());
      }
      gpp_build_all(jobs);

      Spawner kiln({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "warm", "maps"},
                   kiln_env(fx->kiln_cache, /*rss=*/true), root / "check-kiln.out", root / "check-kiln.err");
      check_child(kiln.run(), kiln);
      std::vector<std::string> alt_argv{KILN_BENCH_DLOPEN_PROCESS};
      alt_argv.insert(alt_argv.end(), fx->libs.begin(), fx->libs.end());
      Spawner alt(alt_argv, {"KILN_BENCH_RSS=1"}, root / "check-alt.out", root / "check-alt.err");
      check_child(alt.run(), alt);
      const auto kiln_lines = parse_lines(read_text(root / "check-kiln.out"));
      const auto alt_lines = parse_lines(read_text(root / "check-alt.out"));
      fx->kiln_checksum = std::stod(kiln_lines.at("checksum"));
      fx->alt_checksum = std::stod(alt_lines.at("checksum"));
      fx->kiln_rss_mb = peak_rss_mb(kiln_lines);
      fx->alt_rss_mb = peak_rss_mb(alt_lines);
      if (std::fabs(fx->kiln_checksum - fx->alt_checksum) > 1e-12 * std::fabs(fx->kiln_checksum))
        throw std::runtime_error("kiln and the g++ alternative compute different results: checksums " +
                                 std::to_string(fx->kiln_checksum) + " vs " + std::to_string(fx->alt_checksum));
      fixture = std::move(fx);
    } catch (const std::exception& e) {
      error = std::string("process fixture: ") + e.what();
    }
  }
  if (!error.empty()) throw std::runtime_error(error);
  return *fixture;
}

// The two sides' processes, each writing its lines to `out`.
Spawner warm_kiln_spawner(const ProcessFixture& fx, const fs::path& out) {
  return Spawner({KILN_BENCH_WARM_PROCESS, std::to_string(kiln_bench::kProcessKernels), "warm"},
                 kiln_env(fx.kiln_cache), out, fx.root.path() / "run-kiln.err");
}
Spawner warm_dlopen_spawner(const ProcessFixture& fx, const fs::path& out) {
  std::vector<std::string> argv{KILN_BENCH_DLOPEN_PROCESS};
  argv.insert(argv.end(), fx.libs.begin(), fx.libs.end());
  return Spawner(argv, {}, out, fx.root.path() / "run-alt.err");
}

// The counters both warm-process rows record: peak RSS (from the fixture's
// validation run, rss_mb), the child's CPU time, and the time before its main
// and after its last output line (t_end) until it was reaped.
void record_process(benchmark::State& state, const Child& child, const std::map<std::string, std::string>& lines,
                    double rss_mb) {
  state.SetIterationTime(child.wall_s);
  state.counters["peakrss_MB"] = rss_mb;
  state.counters["cpu_ms"] = child.cpu_ms;
  state.counters["premain_ms"] = double(field_ll(lines, "t_main") - child.spawn_ns) * 1e-6;
  state.counters["exit_ms"] = double(child.exit_ns - field_ll(lines, "t_end")) * 1e-6;
}

void process_warm_kiln(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    const fs::path out = fx.root.path() / "run-kiln.out";
    Spawner spawner = warm_kiln_spawner(fx, out);
    for (auto _ : state) {
      const Child child = spawner.run();
      check_child(child, spawner);
      const auto lines = parse_lines(read_text(out));
      record_process(state, child, lines, fx.kiln_rss_mb);
      state.counters["runtime_ms"] = double(field_ll(lines, "t_runtime") - field_ll(lines, "t_main")) * 1e-6;
      state.counters["resolve20_ms"] = double(field_ll(lines, "t_resolved") - field_ll(lines, "t_runtime")) * 1e-6;
      state.counters["end_ms"] = double(field_ll(lines, "t_end") - field_ll(lines, "t_metrics")) * 1e-6;
    }
    state.SetLabel("kiln: new process, Runtime on the cache, 20 kernel()+call (disk_hits==20, compiles==0)");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_warm_dlopen(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    const fs::path out = fx.root.path() / "run-alt.out";
    Spawner spawner = warm_dlopen_spawner(fx, out);
    for (auto _ : state) {
      const Child child = spawner.run();
      check_child(child, spawner);
      const auto lines = parse_lines(read_text(out));
      record_process(state, child, lines, fx.alt_rss_mb);
      state.counters["load20_ms"] = double(field_ll(lines, "t_end") - field_ll(lines, "t_main")) * 1e-6;
    }
    state.SetLabel("alternative: new process, dlopen+dlsym+call of 20 cached g++ .so files");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

// The same two processes interleaved, kiln first in every other pair: the
// separate rows above run one side's repetitions after the other's, so a drift
// of the machine between them lands in their ratio. Time: kiln's median.
constexpr int kPairedRuns = 200;

void process_warm_paired(benchmark::State& state) {
  try {
    const ProcessFixture& fx = process_fixture();
    Spawner kiln = warm_kiln_spawner(fx, fx.root.path() / "run-kiln.out");
    Spawner alt = warm_dlopen_spawner(fx, fx.root.path() / "run-alt.out");
    for (auto _ : state) {
      std::vector<double> kiln_s, alt_s;
      for (int i = 0; i < kPairedRuns; ++i) {
        for (const bool kiln_turn : {i % 2 == 0, i % 2 != 0}) {
          Spawner& spawner = kiln_turn ? kiln : alt;
          const Child child = spawner.run();
          check_child(child, spawner);
          (kiln_turn ? kiln_s : alt_s).push_back(child.wall_s);
        }
      }
      const double kiln_median = kiln_bench::median_of(kiln_s);
      state.SetIterationTime(kiln_median);
      state.counters["kiln_ms"] = kiln_median * 1e3;
      state.counters["dlopen_ms"] = kiln_bench::median_of(alt_s) * 1e3;
    }
    state.SetLabel("kiln and dlopen processes interleaved, " + std::to_string(kPairedRuns) + " of each: medians");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_cold_kiln(benchmark::State& state) {
  try {
    for (auto _ : state) {
      TempDir dir;
      Spawner spawner({KILN_BENCH_WARM_PROCESS, "1", "cold"}, kiln_env(dir.path() / "cache", /*rss=*/true),
                      dir.path() / "out", dir.path() / "err");
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      state.counters["peakrss_MB"] = peak_rss_mb(parse_lines(read_text(dir.path() / "out")));
      state.counters["cpu_ms"] = child.cpu_ms;
    }
    state.SetLabel("kiln: new process, empty cache, 1 kernel: loads clang, compiles, stores, links, calls");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

void process_cold_gpp(benchmark::State& state) {
  try {
    for (auto _ : state) {
      TempDir dir;
      const fs::path cpp = dir.path() / "kernel.cpp";
      write_text(cpp, alternative_source("update_theta_and_exner", kiln_bench::process_spec(0)));
      Spawner spawner({KILN_BENCH_DLOPEN_PROCESS, "--compile", cpp.string(), (dir.path() / "kernel.so").string()},
                      {"KILN_BENCH_RSS=1"}, dir.path() / "out", dir.path() / "err");
      const Child child = spawner.run();
      check_child(child, spawner);
      state.SetIterationTime(child.wall_s);
      // Peak RSS: the helper's own (g++ and cc1plus are its children). CPU: wait4 counts the
      // children it waited for, so g++ and cc1plus are in it.
      state.counters["peakrss_MB"] = peak_rss_mb(parse_lines(read_text(dir.path() / "out")));
      state.counters["cpu_ms"] = child.cpu_ms;
    }
    state.SetLabel("alternative: new process runs g++ on the .cpp, dlopen+dlsym+call");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void release_process_fixture() { g_process_fixture.reset(); }

void register_process_rows() {
  using benchmark::RegisterBenchmark;
  // One child process per iteration; the median of the repetitions is the figure.
  RegisterBenchmark("process_warm_20/kiln", process_warm_kiln)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(20)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_warm_20/dlopen", process_warm_dlopen)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(20)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_warm_20/paired", process_warm_paired)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
  RegisterBenchmark("process_cold_1/kiln", process_cold_kiln)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);
  RegisterBenchmark("process_cold_1/gpp_dlopen", process_cold_gpp)
      ->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1)->Repetitions(5)->ReportAggregatesOnly(true);
}

}  // namespace kiln_bench
