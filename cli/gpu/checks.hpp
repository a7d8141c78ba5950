// The checks kiln_gpu_check runs, one file each, and what they share: the
// grids, the granule cases, and the GPU kernels resolved so far (which the
// warm-start check resolves again in a new Runtime).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "cli/gpu/options.hpp"
#include "cli/gpu/report.hpp"
#include "granule/granule.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace kiln::gpu_check {

// One correctness case: the granule's fields in `layout`, its kernels built in `mode`.
struct Case {
  granule::Layout layout;
  Mode mode;
  std::string name() const;
};
// Specialised and generic, C and Fortran order (blocked layouts: tests/api's GPU tests).
const std::vector<Case>& correctness_cases();
// The launch and bandwidth checks: ICON's GPU layout, specialised.
inline constexpr Case kTimedCase{granule::Layout::fortran, Mode::specialised};

// A GPU kernel a check resolved: what the warm start resolves again.
struct Resolved {
  std::string kernel;
  Spec spec;
  Mode mode;
  std::string key;
};

struct Context {
  Context(Options o, Runtime& r, Report& rep);
  Options options;
  Runtime& rt;
  Report& report;
  granule::Grid grid;              // the correctness and launch grid
  std::vector<Resolved> resolved;  // distinct keys, in the order first resolved
  void note_resolved(const granule::Stage& stage, Mode mode, const GpuKernel& k);
  // The bandwidth grid, made on first use (it is large).
  const granule::Grid& bandwidth_grid();
  // The Runtimes the correctness check compares with: rt, and unless rt's
  // Config already has it, one with contraction off (KILN_FP_CONTRACT=off,
  // which reaches NVRTC as --fmad=false): there the GPU should give the CPU's
  // bits wherever fused multiply-adds were the only difference.
  std::vector<Runtime*> correctness_runtimes();

 private:
  std::unique_ptr<granule::Grid> bandwidth_grid_;
  std::unique_ptr<Runtime> without_contraction_;
};

// The JSON of a grid of nx x ny rhombi and `levels` levels.
nlohmann::ordered_json describe(const granule::Grid& grid, std::int64_t nx, std::int64_t ny, std::int64_t levels);

// The middle value of `v` (of an even count, the mean of the two middle ones); 0 when empty.
double median(std::vector<double> v);

// Empty when CUDA sees a device; else why not.
std::string no_gpu_reason();

// GPU runs: each adds its section to ctx.report.doc and prints its table.
void check_device(Context& ctx);
void check_correctness(Context& ctx);
void check_bandwidth(Context& ctx);
void check_warm_start(Context& ctx);
void check_launch_overhead(Context& ctx);
// The figures with their targets, from the sections above (doc["summary"]).
void summarise(Context& ctx);

// --prepare ARCH: no GPU touched. Every CPU kernel the correctness check calls,
// and every GPU kernel the checks resolve compiled for ARCH, into the cache.
void prepare(Context& ctx, const std::string& arch);

}  // namespace kiln::gpu_check
