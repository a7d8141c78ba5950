// kiln_bench's process_bundle_<N>/paired rows (N = 20, 200): a whole new
// process that resolves N cached kernels with one Runtime::kernels(), so from
// the cache bundle of the set (one file opened, verified and mapped,
// docs/manual/cache.md), against one that dlopens N cached g++ .so files, and
// one that resolves the same N kernels one kernel() at a time (each from its
// own entry), interleaved in turn, so that a drift of the machine lands on
// all three alike. Time: the bundle side's median.
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

struct BundleFixture {
  TempDir root;
  fs::path kiln_cache;
  std::vector<std::string> libs;
};

std::vector<std::string> env_of(const fs::path& cache) {
  return {"KILN_CACHE_DIR=" + cache.string(), "KILN_LOG_LEVEL=error"};
}

std::vector<std::string> kiln_argv(int count, const char* expect, bool batch) {
  std::vector<std::string> argv{KILN_BENCH_WARM_PROCESS, std::to_string(count), expect};
  if (batch) argv.push_back("batch");
  return argv;
}

double checksum_of(const fs::path& out) { return std::stod(parse_lines(read_text(out)).at("checksum")); }

// The kiln cache with the N kernels and their bundle (a cold batch compiles
// them one by one, then writes it), the N g++ .so files, and one validation
// run of each side: the same checksum.
std::unique_ptr<BundleFixture> make_fixture(int count) {
  auto fx = std::make_unique<BundleFixture>();
  const fs::path root = fx->root.path();
  fx->kiln_cache = root / "kiln-cache";
  Spawner populate(kiln_argv(count, "cold", true), env_of(fx->kiln_cache), root / "populate.out",
                   root / "populate.err");
  check_child(populate.run(), populate);
  fs::create_directories(root / "alt");
  std::vector<std::pair<fs::path, fs::path>> jobs;
  for (int i = 0; i < count; ++i) {
    char name[16];
    std::snprintf(name, sizeof name, "k%03d", i);
    const fs::path stem = root / "alt" / name;
    write_text(fs::path(stem).replace_extension(".cpp"),
               alternative_source("update_theta_and_exner", kiln_bench::process_spec(i)));
    jobs.emplace_back(fs::path(stem).replace_extension(".cpp"), fs::path(stem).replace_extension(".so"));
    fx->libs.push_back(jobs.back().second.string());
  }
  gpp_build_all(jobs);
  std::vector<std::string> alt_argv{KILN_BENCH_DLOPEN_PROCESS};
  alt_argv.insert(alt_argv.end(), fx->libs.begin(), fx->libs.end());
  Spawner bundle(kiln_argv(count, "warm", true), env_of(fx->kiln_cache), root / "check-bundle.out", root / "err");
  Spawner alt(alt_argv, {}, root / "check-alt.out", root / "err");
  check_child(bundle.run(), bundle);
  check_child(alt.run(), alt);
  const double kiln_sum = checksum_of(root / "check-bundle.out"), alt_sum = checksum_of(root / "check-alt.out");
  if (std::fabs(kiln_sum - alt_sum) > 1e-12 * std::fabs(kiln_sum))
    throw std::runtime_error("kiln's bundle and the g++ alternative compute different results: checksums " +
                             std::to_string(kiln_sum) + " vs " + std::to_string(alt_sum));
  return fx;
}

// Interleaved runs per side: fewer for 200 kernels, whose processes are longer.
int runs_for(int count) { return count >= 200 ? 60 : 150; }

void process_bundle_paired(benchmark::State& state) {
  const int count = static_cast<int>(state.range(0));
  try {
    const std::unique_ptr<BundleFixture> fx = make_fixture(count);
    const fs::path root = fx->root.path();
    std::vector<std::string> alt_argv{KILN_BENCH_DLOPEN_PROCESS};
    alt_argv.insert(alt_argv.end(), fx->libs.begin(), fx->libs.end());
    Spawner bundle(kiln_argv(count, "warm", true), env_of(fx->kiln_cache), root / "bundle.out", root / "bundle.err");
    Spawner alt(alt_argv, {}, root / "alt.out", root / "alt.err");
    Spawner single(kiln_argv(count, "warm", false), env_of(fx->kiln_cache), root / "single.out", root / "single.err");
    Spawner* sides[] = {&bundle, &alt, &single};
    for (auto _ : state) {
      std::vector<double> seconds[3];
      for (int i = 0; i < runs_for(count); ++i) {
        for (int turn = 0; turn < 3; ++turn) {  // each side first in every third round
          const int side = (i + turn) % 3;
          const Child child = sides[side]->run();
          check_child(child, *sides[side]);
          seconds[side].push_back(child.wall_s);
        }
      }
      const double bundle_ms = median_of(seconds[0]) * 1e3, alt_ms = median_of(seconds[1]) * 1e3;
      state.SetIterationTime(bundle_ms * 1e-3);
      state.counters["bundle_ms"] = bundle_ms;
      state.counters["dlopen_ms"] = alt_ms;
      state.counters["kernel_by_kernel_ms"] = median_of(seconds[2]) * 1e3;
      state.counters["ratio"] = bundle_ms / alt_ms;
    }
    state.SetLabel("new processes interleaved, " + std::to_string(runs_for(count)) + " of each: kernels() of " +
                   std::to_string(count) + " from their bundle vs dlopen of " + std::to_string(count) +
                   " .so vs kernel() one by one: medians");
  } catch (const std::exception& e) {
    state.SkipWithError(e.what());
  }
}

}  // namespace

void register_bundle_rows() {
  for (const int count : {20, 200})
    benchmark::RegisterBenchmark(("process_bundle_" + std::to_string(count) + "/paired").c_str(),
                                 process_bundle_paired)
        ->Arg(count)->UseManualTime()->Unit(benchmark::kMillisecond)->Iterations(1);
}

}  // namespace kiln_bench
