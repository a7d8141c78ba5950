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
#include <chrono>
#include <cstdio>
#include <cstdlib>

#include "cli/gpu/checks.hpp"
#include "cli/gpu/cuda_calls.hpp"

namespace kg = kiln::gpu_check;

namespace {

// Runs one check, then writes the JSON so far: a run stopped later (a hung
// device, the caller's timeout) keeps what the checks before it found. On a
// hung device nothing more can run, nor end cleanly (freeing memory waits
// for the device): the JSON is written and the process ends here.
void step(kg::Context& ctx, const std::string& name, void (*check)(kg::Context&)) {
  ctx.report.run(name, [&] { check(ctx); });
  ctx.report.write(ctx.options.json, ctx.report.exit_status());
  if (kg::device_hung()) {
    ctx.report.error(name, "the device is hung: the checks after this one did not run");
    ctx.report.write(ctx.options.json, 1);
    std::fflush(stdout);
    std::_Exit(1);
  }
}

int run_on_gpu(kg::Context& ctx) {
  step(ctx, "device", kg::check_device);
  step(ctx, "correctness", kg::check_correctness);
  step(ctx, "bandwidth", kg::check_bandwidth);
  step(ctx, "warm start", kg::check_warm_start);
  // Last: it launches kiln's CUBIN outside kiln.
  step(ctx, "launch overhead", kg::check_launch_overhead);
  step(ctx, "summary", kg::summarise);
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
  std::setvbuf(stdout, nullptr, _IOLBF, 0);  // each line out at once, also into a pipe (tee), should the run stop
  kg::set_wait_limit(std::chrono::milliseconds(static_cast<long long>(options.wait_limit_s * 1000)));
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
