#include "cli/gpu/checks.hpp"

#include <algorithm>

namespace kiln::gpu_check {

std::string Case::name() const {
  return std::string(mode == Mode::specialised ? "specialised" : "generic") + ", " +
         (layout == granule::Layout::c ? "C order" : "Fortran order");
}

const std::vector<Case>& correctness_cases() {
  static const std::vector<Case> cases = {{granule::Layout::c, Mode::specialised},
                                          {granule::Layout::fortran, Mode::specialised},
                                          {granule::Layout::c, Mode::generic},
                                          {granule::Layout::fortran, Mode::generic}};
  return cases;
}

Context::Context(Options o, Runtime& r, Report& rep)
    : options(std::move(o)), rt(r), report(rep), grid(granule::Grid::limited_area(options.nx, options.ny)) {}

const granule::Grid& Context::bandwidth_grid() {
  if (!bandwidth_grid_)
    bandwidth_grid_ = std::make_unique<granule::Grid>(granule::Grid::limited_area(options.bw_nx, options.bw_ny));
  return *bandwidth_grid_;
}

std::vector<Runtime*> Context::correctness_runtimes() {
  if (rt.config().fp_contract == "off") return {&rt};
  if (!without_contraction_) {
    Config config = rt.config();
    config.fp_contract = "off";
    without_contraction_ = std::make_unique<Runtime>(std::move(config));
  }
  return {&rt, without_contraction_.get()};
}

void Context::note_resolved(const granule::Stage& stage, Mode mode, const GpuKernel& k) {
  const std::string key = k.key();
  for (const Resolved& r : resolved)
    if (r.key == key) return;
  resolved.push_back({stage.kernel, stage.spec, mode, key});
}

nlohmann::ordered_json describe(const granule::Grid& grid, std::int64_t nx, std::int64_t ny, std::int64_t levels) {
  using granule::Entity;
  return {{"grid", "limited area"},
          {"nx", nx},
          {"ny", ny},
          {"levels", levels},
          {"cells", grid.size(Entity::cell)},
          {"edges", grid.size(Entity::edge)},
          {"vertices", grid.size(Entity::vertex)}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0.0;
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}

}  // namespace kiln::gpu_check
