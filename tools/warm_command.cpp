// `kiln warm`: fills the cache for a GPU that is not here. A login node (no
// GPU, no driver) compiles the granule's kernels for the compute nodes'
// architecture, specialised for their grid, so every rank there starts warm.
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>

#include "kiln/kiln.hpp"
#include "tools/commands.hpp"
#include "tools/granule/granule.hpp"
#include "tools/granule/grid.hpp"

namespace kiln::tools {
namespace {

struct WarmOptions {
  std::string backend = "cuda";
  std::string arch;
  std::int64_t nx = 128, ny = 80;  // the demo's grid
  std::int64_t levels = 80;
  bool limited_area = false;
  std::string layout = "fortran";  // the layout GPUs want (coalesced horizontal access)
  std::string mode = "both";       // both | specialised | generic
};

void warm(const WarmOptions& o) {
  Runtime rt;
  const granule::Grid grid =
      o.limited_area ? granule::Grid::limited_area(o.nx, o.ny) : granule::Grid::torus(o.nx, o.ny);
  const granule::Granule granule(grid, o.levels, o.layout == "fortran" ? granule::Layout::fortran : granule::Layout::c);
  const GpuTarget target{.backend = o.backend == "hip" ? GpuBackend::hip : GpuBackend::cuda, .arch = o.arch};
  std::vector<Mode> modes;
  if (o.mode != "generic") modes.push_back(Mode::specialised);
  if (o.mode != "specialised") modes.push_back(Mode::generic);

  std::printf("kiln warm: %zu kernels for %s %s, %s grid %lld x %lld x %lld levels (%s order)\n",
              granule.stages().size(), o.backend.c_str(), o.arch.c_str(), o.limited_area ? "limited-area" : "torus",
              static_cast<long long>(o.nx), static_cast<long long>(o.ny), static_cast<long long>(o.levels),
              o.layout == "fortran" ? "Fortran" : "C");
  const auto start = std::chrono::steady_clock::now();
  for (const granule::Stage& stage : granule.stages())
    for (Mode mode : modes) {
      const std::string key = rt.precompile(stage.kernel, stage.spec, target, mode);
      std::printf("  %s  %s%s\n", key.c_str(), stage.kernel.c_str(), mode == Mode::generic ? " (generic)" : "");
    }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  const KernelMetrics total = rt.metrics().total();
  std::printf("summary: %llu compiles, %llu disk hits in %.0f ms\n", static_cast<unsigned long long>(total.compiles),
              static_cast<unsigned long long>(total.disk_hits), ms);
}

}  // namespace

void add_warm_command(CLI::App& app) {
  auto options = std::make_shared<WarmOptions>();
  CLI::App* cmd = app.add_subcommand(
      "warm", "Compile the granule's kernels for a GPU that is not here, into the cache (e.g. on a login node)");
  cmd->add_option("--backend", options->backend, "GPU compiler: cuda (NVRTC, the default) or hip (hipRTC)")
      ->check(CLI::IsMember({"cuda", "hip"}));
  cmd->add_option("--arch", options->arch, "architecture: sm_80, sm_90 (CUBIN), compute_90 (PTX); gfx90a, gfx908 (hip)")
      ->required();
  cmd->add_option("--nx", options->nx, "grid rhombi along x (cells = 2 nx ny)")->check(CLI::Range(2, 1 << 14));
  cmd->add_option("--ny", options->ny, "grid rhombi along y")->check(CLI::Range(2, 1 << 14));
  cmd->add_option("--levels", options->levels, "vertical levels")->check(CLI::Range(2, 1024));
  cmd->add_flag("--limited-area", options->limited_area, "cut the grid open (boundary and nudging zones)");
  cmd->add_option("--layout", options->layout, "field layout: fortran (ICON's, the default) or c")
      ->check(CLI::IsMember({"c", "fortran"}));
  cmd->add_option("--mode", options->mode, "specialised, generic, or both")
      ->check(CLI::IsMember({"both", "specialised", "generic"}));
  cmd->callback([options] { warm(*options); });
}

}  // namespace kiln::tools
