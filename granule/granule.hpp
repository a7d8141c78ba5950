// The granule: the kernels of ICON's horizontal diffusion and vertical solver
// called in sequence over one grid, as the model's step calls them. The demo
// runs it cold then warm, the benchmarks time its stages, the tests compare
// specialised and generic runs of it.
//
// One step, with the fields it passes on:
//   1 temporary_fields_for_turbulence_diagnostics   vn -> div, kh_c          (cells, C2E)
//   2 mo_intp_rbf_rbf_vec_interpol_vertex           vn -> u_vert, v_vert     (vertices, V2E)
//   3 apply_diffusion_to_vn                         u_vert, v_vert -> vn     (edges, E2C2V)
//   4 apply_diffusion_to_w_and_..._for_turbulence   w_old -> w, dwdx, dwdy   (cells, C2E2CO)
//   5 interpolate_cell_field_to_half_levels         theta_v -> theta_v_ic    (cells)
//   6 solve_tridiagonal_matrix_for_w                theta_v_ic -> w          (cell columns)
//   7 update_theta_and_exner                        z_temp -> theta_v, exner (cells)
// then w becomes the next step's w_old. Inputs are random in physically
// plausible ranges (seeded), small enough that many steps stay finite.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "granule/field.hpp"
#include "granule/grid.hpp"
#include "kiln/kiln.hpp"

namespace kiln::granule {

// One kernel call of the step: its name, its specialisation for this grid and
// layout, and the call with the granule's fields.
struct Stage {
  std::string kernel;
  Spec spec;
  std::function<void(const Kernel&)> call;
  // Bytes the call must move at least: every array it touches read (and the
  // outputs written) once over its domain, an output it does not read twice
  // (the write-allocate that reads it into the cache first). For bandwidth figures.
  double bytes = 0.0;
};

class Granule {
 public:
  Granule(const Grid& grid, std::int64_t levels, Layout layout, std::uint64_t seed = 1);
  // The stages capture `this`: a granule stays where it was made.
  Granule(const Granule&) = delete;
  Granule& operator=(const Granule&) = delete;

  // One step: each stage looks its kernel up in `rt` (a memory hit after the
  // first step, as in a model's time loop) and calls it.
  void step(Runtime& rt, Mode mode);
  const std::vector<Stage>& stages() const { return stages_; }
  // Ends a step outside step() (the benchmarks call stages one by one).
  void swap_w() { std::swap(fields_.at("w"), fields_.at("w_old")); }

  // Every field by name (the outputs and the state carried between steps).
  const std::map<std::string, Field>& fields() const { return fields_; }
  // The largest |a - b| over every value of every field; 0 when identical.
  static double max_difference(const Granule& a, const Granule& b);
  // True when every value is finite.
  bool finite() const;

 private:
  Field& f(const std::string& name) { return fields_.at(name); }
  kiln_arg table(Table t) const;
  void make_column_major_tables();
  void make_fields(std::uint64_t seed);
  void add_stages();

  const Grid& grid_;
  std::int64_t levels_;
  Layout layout_;
  // Fortran order: the tables transposed, as ICON holds them (idx(nproma, nblks, n):
  // the cell index contiguous, one column per neighbour).
  std::map<Table, std::vector<std::int32_t>> column_major_tables_;
  std::map<std::string, Field> fields_;
  std::vector<Stage> stages_;
};

}  // namespace kiln::granule
