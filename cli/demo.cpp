// `kiln demo`: the granule. Builds an ICON-like grid, specialises every kernel
// of the diffusion-and-solver step for it, runs a number of steps the way a
// model's time loop does (look up, call, every step), and prints where the
// time went (a summary; the init-vs-run table with --table). Run it twice:
// the second run compiles nothing. --steps-sweep runs it at several lengths.
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "cli/commands.hpp"
#include "cli/demo_summary.hpp"
#include "cli/grid_flags.hpp"
#include "cli/steps_sweep.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace kiln::cli {
namespace {

struct DemoOptions {
  granule::GridOptions grid{.layout = "c"};
  int steps = 20;
  std::string mode = "both";  // both | specialised | generic
  int threads = 0;            // 0: Config's (KILN_THREADS, OMP_NUM_THREADS, else 1)
  bool table = false;         // the full init-vs-run table after the summary
  bool batch = false;         // every kernel asked for in one kernels() batch before the first step
  std::vector<int> sweep;     // --steps-sweep: these lengths, in new processes
  std::filesystem::path sweep_dir = "kiln-steps-sweep";
};

// The options a sweep passes on to each of its runs (all but the steps).
std::vector<std::string> passed_on(const DemoOptions& o) {
  std::vector<std::string> args{"--nx",     std::to_string(o.grid.nx), "--ny",   std::to_string(o.grid.ny),
                                "--levels", std::to_string(o.grid.levels), "--layout", o.grid.layout,
                                "--mode",   o.mode};
  if (o.grid.limited_area) args.push_back("--limited-area");
  if (o.batch) args.push_back("--batch");
  if (o.threads > 0) args.insert(args.end(), {"--threads", std::to_string(o.threads)});
  return args;
}

const char* describe(const granule::Grid& grid) { return grid.is_limited_area() ? "limited-area" : "torus"; }

// Every stage's kernel, as a model's init asks for them at once (--batch).
std::vector<KernelRequest> requests_of(const granule::Granule& granule, Mode mode) {
  std::vector<KernelRequest> requests;
  for (const granule::Stage& stage : granule.stages()) requests.push_back({stage.kernel, stage.spec, mode});
  return requests;
}

void run_demo(const DemoOptions& o) {
  Config config = Config::from_env();
  // The demo prints run times: its calls are timed whatever KILN_METRICS says
  // (a Runtime left to itself times calls only when the metrics are asked for).
  config.time_calls = true;
  if (o.threads > 0) config.threads = o.threads;
  Runtime rt(config);

  const auto grid_start = std::chrono::steady_clock::now();
  const granule::Grid grid = o.grid.grid();
  const granule::Layout layout = o.grid.field_layout();
  const bool run_specialised = o.mode != "generic", run_generic = o.mode != "specialised";
  std::optional<granule::Granule> specialised, generic;
  if (run_specialised) specialised.emplace(grid, o.grid.levels, layout);
  if (run_generic) generic.emplace(grid, o.grid.levels, layout);
  const double setup_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - grid_start).count();

  std::printf("kiln demo: granule of %zu kernels on a %s grid of %lld cells, %lld edges, %lld vertices x %lld levels "
              "(%s order), %d steps, %s\n",
              (specialised ? *specialised : *generic).stages().size(), describe(grid),
              static_cast<long long>(grid.size(granule::Entity::cell)),
              static_cast<long long>(grid.size(granule::Entity::edge)),
              static_cast<long long>(grid.size(granule::Entity::vertex)), static_cast<long long>(o.grid.levels),
              o.grid.layout_name(), o.steps,
              o.mode == "both" ? "specialised and generic side by side" : o.mode.c_str());
  std::printf("cache: %s; grid and fields set up in %.0f ms\n",
              config.use_disk_cache ? config.cache_dir.c_str() : "(disabled)", setup_ms);

  const auto start = std::chrono::steady_clock::now();
  // What must compile then compiles on the build threads together; the steps
  // look each kernel up as before (memory hits).
  if (o.batch && specialised) rt.kernels(requests_of(*specialised, Mode::specialised));
  if (o.batch && generic) rt.kernels(requests_of(*generic, Mode::generic));
  for (int step = 0; step < o.steps; ++step) {
    if (specialised) specialised->step(rt, Mode::specialised);
    if (generic) generic->step(rt, Mode::generic);
  }
  const double loop_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();

  const granule::Granule& any = specialised ? *specialised : *generic;
  if (!any.finite()) std::printf("warning: the fields hold non-finite values after %d steps\n", o.steps);
  // The same source with the same values: specialised and generic must agree
  // bit for bit (no fast-math, one contraction rule). Any difference, NaN
  // included, is a wrong kernel, and the demo fails once it has printed all.
  double difference = 0.0;
  if (specialised && generic) {
    difference = granule::Granule::max_difference(*specialised, *generic);
    std::printf("check: specialised vs generic after %d steps, max |diff| over every field: %g\n", o.steps,
                difference);
  }

  const MetricsSnapshot m = rt.metrics();
  std::printf("%s", demo_summary(m, {.steps = o.steps, .loop_ms = loop_ms}).c_str());
  if (o.table) {
    std::printf("\n%s", m.table().c_str());
  } else if (!config.print_metrics) {
    std::printf("(every phase of every kernel: --table, or KILN_METRICS=1)\n");
  }
  if (!(difference == 0.0)) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", difference);
    throw Error(std::string("kiln demo: the specialised and generic results differ (max |diff| ") + text +
                " over every field)");
  }
}

}  // namespace

void add_demo_command(CLI::App& app) {
  auto options = std::make_shared<DemoOptions>();
  CLI::App* demo = app.add_subcommand(
      "demo", "Run the granule (ICON diffusion and solver kernels on a generated grid), print where the time went");
  add_grid_options(demo, options->grid, "field layout: c (levels contiguous, the default) or fortran (ICON's)");
  demo->add_option("--steps", options->steps, "time steps")->check(CLI::Range(1, 100000));
  demo->add_option("--threads", options->threads,
                   "the most threads a kernel call runs on, one per 16,384 points (default: KILN_THREADS, else "
                   "OMP_NUM_THREADS, else 1)")
      ->check(CLI::Range(1, 1024));
  demo->add_option("--mode", options->mode, "run specialised, generic, or both and compare them")
      ->check(CLI::IsMember({"both", "specialised", "generic"}));
  demo->add_flag("--table", options->table, "print the init-vs-run table: every phase of every kernel");
  demo->add_flag("--batch", options->batch,
                 "ask for every kernel in one kernels() batch before the first step, as a model's init would (what "
                 "must compile compiles on the build threads together); the steps look them up as before");
  demo->add_option("--steps-sweep", options->sweep,
                   "run the demo at each of these lengths (e.g. 1,10,100,1000), cold then warm, each in a new process "
                   "on a cache of its own, writing metrics JSON for kiln report")
      ->delimiter(',')
      ->check(CLI::Range(1, 100000));
  demo->add_option("--sweep-dir", options->sweep_dir,
                   "where --steps-sweep writes its files (default kiln-steps-sweep)");
  demo->callback([options] {
    if (options->sweep.empty()) return run_demo(*options);
    run_steps_sweep({.steps = options->sweep, .folder = options->sweep_dir, .demo_args = passed_on(*options)});
  });
}

}  // namespace kiln::cli
