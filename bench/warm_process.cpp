// kiln_bench_warm_process [count] [expect] [maps] [batch]: the kiln side of the
// whole-process benchmarks. A new process creates a Runtime on KILN_CACHE_DIR,
// resolves `count` (default 20) specialisations of update_theta_and_exner
// (process_kernels.hpp) and calls each once on small arrays, then ends.
// "batch" resolves them with one Runtime::kernels() (from the cache bundle of
// the set when there is one, docs/manual/cache.md), else one kernel() each.
//
// expect: "warm" (every kernel from the disk cache, nothing compiled), "cold"
// (every kernel compiled) or "any". A mismatch exits with status 3, so a
// benchmark never times the wrong path. "maps" (validation runs only, not
// timed) also reads /proc/self/maps and requires a warm start not to map clang.
//
// Prints, one per line: timestamps (CLOCK_MONOTONIC ns) at main, after the
// Runtime was made, after the kernels were resolved and called, after the
// Runtime ended; the counters; whether clang was mapped; the peak RSS (with
// KILN_BENCH_RSS=1, else -1); the fields' checksum.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <fstream>
#include <optional>
#include <string>
#include <vector>

#include "bench/process_kernels.hpp"
#include "kiln/kiln.hpp"

namespace {

bool clang_is_mapped() {
  std::ifstream maps("/proc/self/maps");
  std::string line;
  while (std::getline(maps, line))
    if (line.find("libclang-cpp") != std::string::npos || line.find("libkiln_clang") != std::string::npos) return true;
  return false;
}

}  // namespace

int main(int argc, char** argv) {
  const std::int64_t t_main = kiln_bench::monotonic_ns();
  const int count = argc > 1 ? std::atoi(argv[1]) : kiln_bench::kProcessKernels;
  const std::string expect = argc > 2 ? argv[2] : "any";
  bool check_maps = false, batch = false;
  for (int i = 3; i < argc; ++i) {
    check_maps = check_maps || std::strcmp(argv[i], "maps") == 0;
    batch = batch || std::strcmp(argv[i], "batch") == 0;
  }
  if (count < 1 || count > kiln_bench::kMaxProcessKernels || (expect != "warm" && expect != "cold" && expect != "any")) {
    std::fprintf(stderr, "usage: %s [count 1-%d] [warm|cold|any] [maps] [batch]\n", argv[0],
                 kiln_bench::kMaxProcessKernels);
    return 2;
  }
  try {
    kiln::Config config = kiln::Config::from_env();  // KILN_CACHE_DIR, as a user's program is configured
    config.log_level = "error";
    kiln_bench::ProcessFields fields;

    std::optional<kiln::Runtime> rt;
    rt.emplace(config);
    const std::int64_t t_runtime = kiln_bench::monotonic_ns();
    if (batch) {
      std::vector<kiln::KernelRequest> requests;
      for (int i = 0; i < count; ++i) requests.push_back({"update_theta_and_exner", kiln_bench::process_spec(i)});
      for (const kiln::Kernel& k : rt->kernels(requests)) k(fields.args[0], fields.args[1], fields.args[2], fields.args[3]);
    } else {
      for (int i = 0; i < count; ++i) {
        const kiln::Kernel k = rt->kernel("update_theta_and_exner", kiln_bench::process_spec(i));
        k(fields.args[0], fields.args[1], fields.args[2], fields.args[3]);
      }
    }
    const std::int64_t t_resolved = kiln_bench::monotonic_ns();
    const kiln::KernelMetrics total = rt->metrics().total();
    const std::int64_t t_metrics = kiln_bench::monotonic_ns();
    rt.reset();  // the Runtime's end (notes the disk hits in the index) is part of the process
    const std::int64_t t_end = kiln_bench::monotonic_ns();

    const bool mapped = check_maps && clang_is_mapped();
    const long rss_kb = kiln_bench::peak_rss_kb();
    std::printf("t_main %lld\nt_runtime %lld\nt_resolved %lld\nt_metrics %lld\nt_end %lld\n", (long long)t_main,
                (long long)t_runtime, (long long)t_resolved, (long long)t_metrics, (long long)t_end);
    std::printf("compiles %llu\ndisk_hits %llu\nclang_mapped %d\nchecked_maps %d\npeak_rss_kb %ld\nchecksum %.17g\n",
                (unsigned long long)total.compiles, (unsigned long long)total.disk_hits, mapped ? 1 : 0,
                check_maps ? 1 : 0, rss_kb, fields.checksum());
    const auto n = static_cast<std::uint64_t>(count);
    if (expect == "warm" && (total.compiles != 0 || total.disk_hits != n || mapped)) {
      std::fprintf(stderr, "expected a warm start: %llu compiles, %llu disk hits, clang mapped: %d\n",
                   (unsigned long long)total.compiles, (unsigned long long)total.disk_hits, mapped ? 1 : 0);
      return 3;
    }
    if (expect == "cold" && (total.compiles != n || total.disk_hits != 0)) {
      std::fprintf(stderr, "expected a cold start: %llu compiles, %llu disk hits\n",
                   (unsigned long long)total.compiles, (unsigned long long)total.disk_hits);
      return 3;
    }
    return 0;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_bench_warm_process: %s\n", e.what());
    return 1;
  }
}
