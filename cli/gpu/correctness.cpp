// Check 1: every granule stage on the GPU against the same stage on the CPU,
// for each case (specialised and generic, C and Fortran order), with the
// configured contraction and again with contraction off (Context::
// correctness_runtimes: there a difference is not FMA's). One granule
// per case, on the CPU: before each stage its arguments are copied to the
// device, the stage runs there, and its arrays come back; then the stage runs
// on the CPU in place and every array is compared. So each stage starts from
// the CPU's inputs, and a difference belongs to the stage that made it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

#include "cli/gpu/checks.hpp"
#include "cli/gpu/stage_args.hpp"

namespace kiln::gpu_check {
namespace {

constexpr double kTolerance = 1e-12;  // relative to the array's largest magnitude

struct Comparison {
  bool identical = true;
  double relative = 0.0;  // the worst array's max |gpu - cpu| / max |cpu|
  std::string worst;      // that array's argument name
};

// max |a - b| / max |b| over the doubles of one array; infinity when one is NaN and the other not.
double relative_difference(const double* a, const double* b, std::size_t n) {
  double diff = 0.0, scale = 0.0;
  for (std::size_t i = 0; i < n; ++i) {
    if (std::isnan(a[i]) != std::isnan(b[i])) return std::numeric_limits<double>::infinity();
    if (std::isnan(a[i])) continue;
    diff = std::max(diff, std::fabs(a[i] - b[i]));
    scale = std::max(scale, std::fabs(b[i]));
  }
  return scale > 0.0 ? diff / scale : diff;
}

Comparison compare(const KernelDeclaration& decl, const std::vector<kiln_arg>& cpu,
                   const std::vector<std::vector<char>>& gpu) {
  Comparison c;
  for (std::size_t i = 0; i < cpu.size(); ++i) {
    if (cpu[i].rank == 0 || std::memcmp(gpu[i].data(), cpu[i].data, gpu[i].size()) == 0) continue;
    c.identical = false;
    const double rel = static_cast<ElementType>(cpu[i].type) == ElementType::f64
                           ? relative_difference(reinterpret_cast<const double*>(gpu[i].data()),
                                                 static_cast<const double*>(cpu[i].data), gpu[i].size() / 8)
                           : std::numeric_limits<double>::infinity();  // integers must not differ at all
    if (c.worst.empty() || !(rel <= c.relative)) {
      c.relative = rel;
      c.worst = decl.arguments.at(i).name;
    }
  }
  return c;
}

// The stage on the GPU: its arrays as the device left them. Notes the kernel for the warm start.
std::vector<std::vector<char>> run_on_gpu(Context& ctx, Runtime& rt, const granule::Stage& stage, Mode mode) {
  DeviceArgs args(arguments_of(rt, stage));
  const GpuKernel k = rt.gpu_kernel(stage.kernel, stage.spec, mode);
  if (&rt == &ctx.rt) ctx.note_resolved(stage, mode, k);
  k.launch(nullptr, args.device());
  synchronize(stage.kernel + " on the GPU");
  return args.fetch();
}

nlohmann::ordered_json check_stage(Context& ctx, Runtime& rt, const Case& c, const granule::Stage& stage) {
  nlohmann::ordered_json row = {{"kernel", stage.kernel}};
  std::optional<std::vector<std::vector<char>>> on_gpu;
  try {
    on_gpu = run_on_gpu(ctx, rt, stage, c.mode);
  } catch (const std::exception& e) {
    if (device_hung()) throw;  // nothing more can run: the check stops here
    row["error"] = std::string("GPU: ") + e.what();
  }
  // The CPU's run, in place: the next stage's inputs, whatever the GPU did.
  try {
    stage.call(rt.kernel(stage.kernel, stage.spec, c.mode));
  } catch (const std::exception& e) {
    row["error"] = row.value("error", std::string()) + (row.contains("error") ? "; " : "") + "CPU: " + e.what();
    on_gpu.reset();
  }
  if (!on_gpu) {
    row["pass"] = false;
    return row;
  }
  const Comparison cmp = compare(rt.declaration(stage.kernel), arguments_of(rt, stage), *on_gpu);
  row["identical"] = cmp.identical;
  row["max_relative_difference"] = cmp.relative;
  if (!cmp.identical) row["worst_array"] = cmp.worst;
  row["pass"] = cmp.relative <= kTolerance;
  if (!cmp.identical && cmp.relative <= kTolerance)
    row["reason"] = rt.config().fp_contract == "off"
                        ? "not contraction (it is off here): the device's math functions or another order?"
                        : "fused multiply-adds: NVRTC contracts a*b+c (--fmad=true) unlike the CPU build";
  return row;
}

void print_row(const granule::Stage& stage, const nlohmann::ordered_json& row) {
  const bool pass = row["pass"].get<bool>();
  if (row.contains("error"))
    std::printf("  %-72s FAIL  %s\n", stage.kernel.c_str(), row["error"].get<std::string>().c_str());
  else if (row["identical"].get<bool>())
    std::printf("  %-72s pass  identical\n", stage.kernel.c_str());
  else
    std::printf("  %-72s %s  %.2e (%s)\n", stage.kernel.c_str(), pass ? "pass" : "FAIL",
                row["max_relative_difference"].get<double>(), row["worst_array"].get<std::string>().c_str());
}

}  // namespace

void check_correctness(Context& ctx) {
  nlohmann::ordered_json& section = ctx.report.doc["correctness"];
  section["tolerance_relative"] = kTolerance;
  section["cases"] = nlohmann::ordered_json::array();
  std::printf("\n1. correctness: each stage on the GPU against the CPU (pass: relative difference <= %.0e)\n",
              kTolerance);
  bool all = true;
  for (Runtime* rt : ctx.correctness_runtimes()) {
    const std::string contraction = rt->config().fp_contract;
    for (const Case& c : correctness_cases()) {
      std::printf("%s, contraction %s\n", c.name().c_str(), contraction.c_str());
      nlohmann::ordered_json stages = nlohmann::ordered_json::array();
      granule::Granule granule(ctx.grid, ctx.options.levels, c.layout);
      for (const granule::Stage& stage : granule.stages()) {
        nlohmann::ordered_json row = check_stage(ctx, *rt, c, stage);
        const bool pass = row["pass"].get<bool>();
        if (!pass) ctx.report.fail();
        all = all && pass;
        print_row(stage, row);
        stages.push_back(std::move(row));
      }
      section["cases"].push_back({{"case", c.name()}, {"fp_contract", contraction}, {"stages", std::move(stages)}});
    }
  }
  section["pass"] = all;
}

}  // namespace kiln::gpu_check
