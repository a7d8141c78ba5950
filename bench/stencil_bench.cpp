// kiln_stencil_bench: the granule's kernels on a realistic grid, each timed
// three ways: specialised on every value, on ICON's choice (levels, strides
// and flags compiled in, the horizontal bounds and indices read at run time,
// so one binary serves every rank: Spec::run_time), and generic; with the
// memory bandwidth each achieves against a limit measured in the same run: the
// best of STREAM's triad and copy built as kiln kernels, write-allocate traffic
// counted, with plain and with non-temporal stores. Prints Google Benchmark's
// table, then per kernel: times, ratios, GB/s and percentage of the limit, against the
// targets of the stencils issue (informational, never asserted). Times are
// medians of repeated runs. Threads: each kernel specialised on 2 threads
// (Config::threads, the prelude's phases), its speed-up over 1 thread set
// against the references' on 2 threads in the same run.
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

#include "bench/aot_kernels.hpp"
#include "bench/median.hpp"
#include "bench/summary_reporter.hpp"
#include "bench/temp_dir.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "granule/grid_options.hpp"
#include "kiln/kiln.hpp"

namespace {

namespace fs = std::filesystem;
using kiln::granule::Granule;
using kiln::granule::Grid;
using kiln::granule::Layout;

struct Options {
  kiln::granule::GridOptions grid;
  Layout layout = Layout::c;
};

// The three ways of building a kernel that are compared.
enum Way { kConstant, kIconChoice, kGeneric };
constexpr Way kWays[] = {kConstant, kIconChoice, kGeneric};
constexpr const char* kWayNames[] = {"specialised", "icon_choice", "generic"};

// The references, built the way the kernels are (kiln, the prelude, its loop
// helper, specialised): STREAM's triad a = b + s * c and copy a = b over
// arrays far larger than the caches, each with plain stores (a store to a
// line not in the cache reads it first: write-allocate, counted) and with
// non-temporal ones (no allocate), which kernels could use for outputs they
// do not read. Bytes per element: triad 32 / 24 (non-temporal), copy 24 / 16.
constexpr const char* kReferenceKernels = R"(#pragma kiln kernel stream_reference
#pragma kiln size n contains start end
#pragma kiln array double a[n]
#pragma kiln array double b[n]
#pragma kiln array double c[n]
#pragma kiln domain start end
#pragma kiln static double s
#pragma kiln static bool triad
#pragma kiln static bool nontemporal
kiln::for_each_point(a, start, end, 0, 1, [&](auto i, kiln::index_t) {
  const double value = triad ? b(i) + s * c(i) : b(i);
  if (nontemporal) __builtin_nontemporal_store(value, &a(i));
  else a(i) = value;
});
)";

struct Reference {
  const char* name;
  bool triad, nontemporal;
  double bytes_per_element;
};
constexpr Reference kReferences[] = {{"reference/triad", true, false, 32},
                                     {"reference/triad_nontemporal", true, true, 24},
                                     {"reference/copy", false, false, 24},
                                     {"reference/copy_nontemporal", false, true, 16}};
constexpr std::int64_t kReferenceElements = std::int64_t{1} << 24;  // 3 x 128 MiB

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
int with_temporary(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context);

struct Fixture {
  kiln_bench::TempDir cache_dir{"kiln-stencil-bench"};  // outlives the Runtimes below
  std::optional<kiln::Runtime> rt;
  std::unique_ptr<Grid> grid;
  std::unique_ptr<Granule> granule;
  std::vector<kiln::Kernel> kernels[3];
  std::optional<kiln::Runtime> two_threads;  // the same cache: its kernels are disk hits
  std::vector<kiln::Kernel> kernels_on_two;   // specialised, each call on 2 threads
  // The ahead-of-time build of each stage's kernel (aot_kernels.hpp) behind
  // a handle of its own: its parameters read at run time, as a generic
  // build's, from a block filled from the stage's Spec.
  struct Aot {
    std::vector<kiln_value> params;
    std::vector<std::uint64_t> signature;
    kiln::detail::CallBlock block;
    decltype(kiln::detail::CallBlock::entry) entry = nullptr;
    int temporary_like = -1;
    std::vector<double> temporary;  // laid out as its argument (the granule's arrays are dense)
  };
  std::vector<std::unique_ptr<Aot>> aot;
  std::vector<double> a, b, c;                // the references' arrays
  std::vector<kiln::Kernel> references;       // per kReferences, one thread
  std::vector<kiln::Kernel> references_on_two;

  kiln::Spec reference_spec(const Reference& r) const {
    kiln::Spec spec;
    spec.set("start", 0).set("end", kReferenceElements).set("s", 3.0).set("triad", r.triad);
    return spec.set("nontemporal", r.nontemporal);
  }

  explicit Fixture(const Options& o) {
    kiln::Config config;
    config.cache_dir = cache_dir.path();
    config.log_level = "error";
    config.gather = kiln::Config::from_env().gather;  // KILN_GATHER=off|on (docs/performance.md)
    rt.emplace(config);
    grid = std::make_unique<Grid>(o.grid.grid());
    granule = std::make_unique<Granule>(*grid, o.grid.levels, o.layout);
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
    for (const auto& stage : granule->stages()) aot.push_back(aot_handle(stage));
    a.assign(kReferenceElements, 0.0), b.assign(kReferenceElements, 1.0), c.assign(kReferenceElements, 2.0);
    rt->register_kernel(kReferenceKernels, "stream_reference.kiln");
    two_threads->register_kernel(kReferenceKernels, "stream_reference.kiln");
    for (const Reference& r : kReferences) {
      references.push_back(rt->kernel("stream_reference", reference_spec(r)));
      references_on_two.push_back(two_threads->kernel("stream_reference", reference_spec(r)));
    }
  }
  std::unique_ptr<Aot> aot_handle(const kiln::granule::Stage& stage) const {
    auto handle = std::make_unique<Aot>();
    const kiln::KernelDeclaration declaration = rt->declaration(stage.kernel);
    for (const kiln::KernelParameter& p : declaration.parameters) {
      const kiln::Spec::Entry* entry = stage.spec.find(p.name);
      if (!entry) throw std::runtime_error("ahead-of-time " + stage.kernel + ": no value for " + p.name);
      kiln_value v{};
      if (const double* d = std::get_if<double>(&entry->value)) v.f64 = *d;
      else if (const std::int64_t* i = std::get_if<std::int64_t>(&entry->value)) v.i64 = *i;
      else if (const bool* b = std::get_if<bool>(&entry->value)) v.i64 = *b ? 1 : 0;
      handle->params.push_back(v);
    }
    for (const kiln::KernelArgument& a : declaration.arguments)
      handle->signature.push_back(kiln::detail::signature_of(static_cast<std::int32_t>(a.type), a.rank));
    for (const kiln_bench::AotKernel& k : kiln_bench::aot_kernels())
      if (k.name == stage.kernel) handle->entry = k.entry, handle->temporary_like = k.temporary_like;
    if (!handle->entry) throw std::runtime_error("no ahead-of-time build of " + stage.kernel);
    handle->block = {.entry = handle->temporary_like < 0 ? handle->entry : &with_temporary, .params = handle->params.data(), .signature = handle->signature.data(),
                     .count = handle->signature.size(), .out_of_line = false, .threads = 1, .owner = nullptr};
    return handle;
  }

  ~Fixture() {
    two_threads.reset();
    rt.reset();
  }
};

std::unique_ptr<Fixture> g_fixture;
// The ahead-of-time kernel with a temporary being called (set around its calls).
Fixture::Aot* g_aot_with_temporary = nullptr;

// The call's arguments, then the temporary laid out as its `like` argument:
// what kiln's runtime hands the same entry (runtime/call/temporaries.hpp).
int with_temporary(const kiln_arg* const* args, const kiln_value* params, const kiln_context* context) {
  Fixture::Aot& aot = *g_aot_with_temporary;
  const std::size_t count = aot.signature.size();
  kiln_arg temporary = *args[aot.temporary_like];
  std::size_t elements = 1;
  for (int d = 0; d < temporary.rank; ++d) elements *= static_cast<std::size_t>(temporary.shape[d]);
  if (aot.temporary.size() < elements) aot.temporary.resize(elements);
  temporary.data = aot.temporary.data();
  std::vector<const kiln_arg*> passed(args, args + count);
  passed.push_back(&temporary);
  return aot.entry(passed.data(), params, context);
}

// One reference (kReferences[index]) on 1 or 2 threads.
void reference_call(benchmark::State& state, std::size_t index, int threads) {
  Fixture& fx = *g_fixture;
  const kiln::Kernel kernel = threads == 1 ? fx.references[index] : fx.references_on_two[index];
  const std::int64_t n = kReferenceElements;
  const kiln_arg a = kiln::c_array(fx.a.data(), {n}), b = kiln::c_array(fx.b.data(), {n}),
                 c = kiln::c_array(fx.c.data(), {n});
  for (auto _ : state) {
    kernel(a, b, c);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * n *
                                                    kReferences[index].bytes_per_element));
}

// way -1: specialised, each call on 2 threads; -2: the ahead-of-time build.
void stage_call(benchmark::State& state, std::size_t index, int way) {
  Fixture& fx = *g_fixture;
  const kiln::granule::Stage& stage = fx.granule->stages()[index];
  g_aot_with_temporary = fx.aot[index].get();
  const kiln::Kernel kernel = way == -2   ? kiln::Kernel(&fx.aot[index]->block)
                              : way == -1 ? fx.kernels_on_two[index]
                                          : fx.kernels[way][index];
  for (auto _ : state) {
    stage.call(kernel);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(static_cast<double>(state.iterations()) * stage.bytes));
}

// The comparisons printed after the table, from the rows the reporter kept
// (their seconds per iteration and bytes per second).
class Summary {
  using Result = kiln_bench::SummaryReporter::Result;

 public:
  explicit Summary(const kiln_bench::SummaryReporter& rows) : rows_(rows) {}

  // The best of the references on `threads`: the limit every percentage is of.
  const Result* limit(int threads, const char** which) const {
    const Result* best = nullptr;
    for (const Reference& r : kReferences) {
      const Result* row = rows_.find(std::string(r.name) + (threads == 1 ? "" : "/threads2"));
      if (row && (!best || bytes_per_second(row) > bytes_per_second(best))) {
        best = row;
        *which = r.name;
      }
    }
    return best;
  }

  void print_summary(const Granule& granule) const {
    std::printf("\nreferences, built as the kernels are (kiln, one thread), write-allocate traffic counted:\n");
    for (const Reference& r : kReferences)
      if (const Result* row = rows_.find(r.name))
        std::printf("  %-30s %7.2f GB/s (%2.0f bytes per element)\n", r.name, bytes_per_second(row) / 1e9,
                    r.bytes_per_element);
    const char* which = "";
    const Result* best = limit(1, &which);
    if (!best) return;
    const double stream_gbs = bytes_per_second(best) / 1e9;
    std::printf("\nspecialised, ICON's choice (horizontal indices at run time) and generic; bandwidth (outputs not "
                "read count their write-allocate) vs the best reference, %s (%.2f GB/s, one thread); "
                "informational\n",
                which, stream_gbs);
    std::printf("  %-72s %9s %9s %9s %9s %9s %7s %7s\n", "kernel", "spec ms", "icon ms", "gen ms", "icon/spec",
                "gen/spec", "GB/s", "limit");
    std::vector<double> speedups, icon_ratios, icon_over_generic;
    for (const auto& stage : granule.stages()) {
      const Result* s = rows_.find("stencil/" + stage.kernel + "/specialised");
      const Result* i = rows_.find("stencil/" + stage.kernel + "/icon_choice");
      const Result* g = rows_.find("stencil/" + stage.kernel + "/generic");
      if (!s || !i || !g) continue;
      const double speedup = g->seconds / s->seconds;
      const double icon = i->seconds / s->seconds;
      const double gbs = bytes_per_second(s) / 1e9;
      speedups.push_back(speedup);
      icon_ratios.push_back(icon);
      icon_over_generic.push_back(i->seconds / g->seconds);
      std::printf("  %-72s %9.3f %9.3f %9.3f %8.2fx %8.2fx %7.2f %6.0f%%\n", stage.kernel.c_str(),
                  s->seconds * 1e3, i->seconds * 1e3, g->seconds * 1e3, icon, speedup, gbs,
                  100.0 * gbs / stream_gbs);
    }
    if (speedups.empty()) return;
    const double median = kiln_bench::median_of(speedups);
    std::printf("  median speed-up of specialised over generic: %.2fx, target >= 1.2x: %s\n", median,
                median >= 1.2 ? "met" : "MISSED");
    std::printf("  ICON's choice, median time: %.2fx the all-constant build's, %.2fx the generic build's "
                "(one binary per kernel for every rank)\n",
                kiln_bench::median_of(icon_ratios), kiln_bench::median_of(icon_over_generic));
    std::printf("  (memory-bound target: 70%% of the limit or more; the percentages above, per kernel)\n");
    print_ahead_of_time(granule);
    print_threads(granule);
  }

  // Specialised against the same kernel's generic source compiled by g++ -O3
  // -march=native at kiln's build time, one thread each.
  void print_ahead_of_time(const Granule& granule) const {
    std::printf("\nagainst code compiled ahead of time (the generic source, g++ -O3 -march=native at build time, "
                "one thread); target: specialised <= 1.0x; informational\n");
    for (const auto& stage : granule.stages()) {
      const Result* s = rows_.find("stencil/" + stage.kernel + "/specialised");
      const Result* a = rows_.find("stencil/" + stage.kernel + "/ahead_of_time");
      if (!s || !a) continue;
      const double ratio = s->seconds / a->seconds;
      std::printf("  %-72s %9.3f ms vs %9.3f ms: %5.2fx %s\n", stage.kernel.c_str(), s->seconds * 1e3,
                  a->seconds * 1e3, ratio, ratio <= 1.0 ? "met" : "MISSED");
    }
  }

  // Each kernel's speed-up on 2 threads over 1, against the limit's.
  void print_threads(const Granule& granule) const {
    const char *which_one = "", *which_two = "";
    const Result* one = limit(1, &which_one);
    const Result* two = limit(2, &which_two);
    if (!one || !two) return;
    const double stream_scaling = bytes_per_second(two) / bytes_per_second(one);
    std::printf("\nthreads: speed-up of 2 threads over 1, specialised, against the best reference's %.2fx "
                "(%s %.2f GB/s -> %s on 2 threads %.2f GB/s); target >= 0.9 of it; informational\n",
                stream_scaling, which_one, bytes_per_second(one) / 1e9, which_two, bytes_per_second(two) / 1e9);
    for (const auto& stage : granule.stages()) {
      const Result* s1 = rows_.find("stencil/" + stage.kernel + "/specialised");
      const Result* s2 = rows_.find("stencil/" + stage.kernel + "/threads2");
      if (!s1 || !s2) continue;
      const double scaling = s1->seconds / s2->seconds;
      std::printf("  %-72s %9.3f ms -> %9.3f ms: %5.2fx, %4.2f of the reference's: %s\n", stage.kernel.c_str(),
                  s1->seconds * 1e3, s2->seconds * 1e3, scaling, scaling / stream_scaling,
                  scaling >= 0.9 * stream_scaling ? "met" : "MISSED");
    }
  }

 private:
  static double bytes_per_second(const Result* row) { return row->counter("bytes_per_second"); }

  const kiln_bench::SummaryReporter& rows_;
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
    if (o.grid.take(a)) continue;
    if (const char* v = value("--layout")) o.layout = std::strcmp(v, "fortran") == 0 ? Layout::fortran : Layout::c;
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
                static_cast<long long>(options.grid.nx), static_cast<long long>(options.grid.ny),
                static_cast<long long>(options.grid.levels), options.layout == Layout::c ? "C" : "Fortran");
    g_fixture = std::make_unique<Fixture>(options);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "kiln_stencil_bench: %s\n", e.what());
    return 1;
  }
  for (std::size_t r = 0; r < std::size(kReferences); ++r) {
    benchmark::RegisterBenchmark(kReferences[r].name, reference_call, r, 1)->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark((std::string(kReferences[r].name) + "/threads2").c_str(), reference_call, r, 2)
        ->Unit(benchmark::kMillisecond);
  }
  const auto& stages = g_fixture->granule->stages();
  for (std::size_t i = 0; i < stages.size(); ++i)
    for (Way way : kWays) {
      const std::string name = "stencil/" + stages[i].kernel + "/" + kWayNames[way];
      benchmark::RegisterBenchmark(name.c_str(), [i, way](benchmark::State& state) {
        stage_call(state, i, way);
      })->Unit(benchmark::kMillisecond);
    }
  for (std::size_t i = 0; i < stages.size(); ++i) {
    benchmark::RegisterBenchmark(("stencil/" + stages[i].kernel + "/threads2").c_str(),
                                 [i](benchmark::State& state) { stage_call(state, i, -1); })
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("stencil/" + stages[i].kernel + "/ahead_of_time").c_str(),
                                 [i](benchmark::State& state) { stage_call(state, i, -2); })
        ->Unit(benchmark::kMillisecond);
  }

  kiln_bench::SummaryReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  Summary(reporter).print_summary(*g_fixture->granule);
  g_fixture.reset();
  benchmark::Shutdown();
  return 0;
}
