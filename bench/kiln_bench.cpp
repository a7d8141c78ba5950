// kiln_bench: kiln against the obvious alternative, on the same kernels.
//
// The alternative is what a code without kiln does: write the specialised C++
// source to a file, run `g++ -O3 -march=native -shared -fPIC -o x.so x.cpp`,
// dlopen + dlsym the result, and keep the .so files as its cache. Its source is
// exactly the translation unit kiln compiles (kiln's own code generator,
// lang/codegen.cpp, over the embedded prelude and kernel), so both sides
// compile and run the same code.
//
//   cold_compile/<kernel>/...   kiln's whole miss path (new Runtime, new empty
//                               cache folder, a specialisation never seen) vs
//                               source file + g++ subprocess + dlopen + dlsym
//   warm_start/<kernel>/...     new Runtime on a populated cache: disk lookup,
//                               checksum, mapping of the entry vs dlopen + dlsym of the .so
//   runtime_new/...             a new Runtime's construction alone, on the same
//                               cache folder each time or on a new one each time
//   process_warm_20/...         a whole new process that resolves 20 cached
//                               specialisations and calls each once vs one that
//                               dlopens 20 cached .so files (median of 20 runs);
//                               /paired: the two interleaved, 200 of each
//   process_bundle_<N>/paired   a whole new process that resolves N (20, 200)
//                               cached kernels with one kernels(), from their
//                               bundle, vs one that dlopens N .so files, vs
//                               kernel() one by one, interleaved: medians
//   process_cold_1/...          a whole new process whose one kernel is not
//                               cached (kiln loads clang) vs one that runs g++
//   lookup_memory_hit/...       rt.kernel() on a resolved (kernel, spec) vs dlsym
//   call_1point/...             a Kernel handle call on a 1-point domain vs a
//                               direct call of the same JIT'd entry; /kiln_temporary:
//                               the same kernel with a temporary (the checked path);
//                               /kiln_unchecked: the same kernel declaring no
//                               extents (what the extent checks cost per call);
//                               /kiln_threads2: on 2 threads (fork and join)
//   load/..., link/lld          one kernel's binary loaded the way kiln does
//                               (its own mmap of the lld .so), by dlopen, and
//                               as the relocatable object through LLVM ORC's
//                               LLJIT; lld's link time (load_ways.hpp)
//
// Times are what the targets compare; the summary after the table
// prints each comparison. Nothing here asserts on time. Defaults keep a run
// short (--benchmark_min_time=0.1); bench/run_benchmarks.sh runs longer.
// Rows marked manual_time report the measured region in "Time"; their "CPU" is
// the benchmark thread's own, untimed set-up included and children excluded.
// Counters break the time down (_ms, _us: per iteration) or, for the process
// rows, give the child's CPU time and peak RSS. KILN_BENCH_KEEP=1 leaves the
// temporary folders (/tmp/kiln-bench-*: caches, sources, g++ .so files) for inspection.
//
// One file per family of rows (cold_compile.cpp, warm_start.cpp,
// runtime_new.cpp, whole_processes.cpp, bundle_processes.cpp, lookup_and_call.cpp, load_ways.cpp),
// what they share in child_process (the helper processes), gpp_alternative
// (the g++ side), kiln_bench_support.hpp and temp_dir.hpp; the comparisons
// after the table in kiln_bench_summary.cpp.
#include <benchmark/benchmark.h>

#include <cstring>
#include <vector>

#include "bench/gpp_alternative.hpp"
#include "bench/kiln_bench_rows.hpp"
#include "bench/load_ways.hpp"
#include "bench/process_kernels.hpp"
#include "bench/summary_reporter.hpp"

namespace {

void register_all() {
  kiln_bench::register_cold_compile_rows();
  kiln_bench::register_warm_start_rows();
  kiln_bench::register_runtime_new_rows();
  kiln_bench::register_process_rows();
  kiln_bench::register_bundle_rows();
  kiln_bench::register_lookup_and_call_rows();
  kiln_bench::register_load_ways(
      kiln_bench::alternative_source("update_theta_and_exner", kiln_bench::process_spec(0)));
}

}  // namespace

int main(int argc, char** argv) {
  // A short default run (CI does not run this); run_benchmarks.sh asks for more.
  std::vector<char*> args(argv, argv + argc);
  static char default_min_time[] = "--benchmark_min_time=0.1";
  bool min_time_given = false;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--benchmark_min_time", 20) == 0) min_time_given = true;
  if (!min_time_given) args.insert(args.begin() + 1, default_min_time);
  int count = static_cast<int>(args.size());
  args.push_back(nullptr);
  benchmark::Initialize(&count, args.data());
  if (benchmark::ReportUnrecognizedArguments(count, args.data())) return 1;

  register_all();
  kiln_bench::SummaryReporter reporter(benchmark::ConsoleReporter::OO_Tabular);
  benchmark::RunSpecifiedBenchmarks(&reporter);
  kiln_bench::print_kiln_bench_summary(reporter);
  kiln_bench::release_tiny_fixture();  // ends its Runtime and removes the temporary folders
  kiln_bench::release_process_fixture();
  benchmark::Shutdown();
  return 0;
}
