// kiln_gpu_check: kiln's GPU path measured on an NVIDIA GPU, each figure
// against its baseline in the same run (issue 31): the granule's kernels on
// the GPU against the CPU, launch overhead against raw driver launches, the
// warm start against the driver's module load, bandwidth against a device
// copy. Tables on stdout, the same figures as JSON with --json.
//
//   kiln_gpu_check [sizes] [--json PATH]             on the GPU machine
//   kiln_gpu_check [sizes] --prepare sm_90 [--json]  beforehand, where the compilers are
//
// Exit status: 0 all passed; 1 a stage differs from the CPU or a check could
// not run (each is reported and the rest run on); 2 no GPU (without --prepare)
// or bad options.
#include <CLI/CLI.hpp>
#include <cstdio>

#include "cli/gpu/checks.hpp"

namespace kg = kiln::gpu_check;

namespace {

int run_on_gpu(kg::Context& ctx) {
  ctx.report.run("device", [&] { kg::check_device(ctx); });
  ctx.report.run("correctness", [&] { kg::check_correctness(ctx); });
  ctx.report.run("bandwidth", [&] { kg::check_bandwidth(ctx); });
  ctx.report.run("warm start", [&] { kg::check_warm_start(ctx); });
  // Last: it launches kiln's CUBIN outside kiln.
  ctx.report.run("launch overhead", [&] { kg::check_launch_overhead(ctx); });
  ctx.report.run("summary", [&] { kg::summarise(ctx); });
  std::printf("\n%s: %d stage(s) differ from the CPU, %d check(s) could not run\n",
              ctx.report.exit_status() ? "FAILED" : "passed", ctx.report.failures(), ctx.report.errors());
  return ctx.report.exit_status();
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"kiln_gpu_check: kiln's GPU path on an NVIDIA GPU against the CPU and the driver's own calls"};
  kg::Options options;
  kg::add_options(app, options);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;
  }
  kg::Report report;
  report.doc["tool"] = "kiln_gpu_check";
  report.doc["mode"] = options.prepare.empty() ? "gpu" : "prepare";
  int status = 0;
  if (options.prepare.empty()) {
    if (const std::string why = kg::no_gpu_reason(); !why.empty()) {
      std::fprintf(stderr,
                   "gpu_check: %s; this tool measures on an NVIDIA GPU (--prepare ARCH fills the cache "
                   "for one without it)\n",
                   why.c_str());
      report.doc["no_gpu"] = why;
      status = 2;
    }
  }
  if (status == 0) {
    try {
      kiln::Runtime rt;  // Config::from_env(): KILN_CACHE_DIR, KILN_TARGET_CPU, ...
      kg::Context ctx(options, rt, report);
      if (options.prepare.empty())
        status = run_on_gpu(ctx);
      else {
        kg::prepare(ctx, options.prepare);
        status = report.exit_status();
      }
    } catch (const std::exception& e) {
      report.error("setup", e.what());
      status = 1;
    }
  }
  try {
    report.write(options.json, status);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "gpu_check: %s\n", e.what());
    return status ? status : 1;
  }
  return status;
}
